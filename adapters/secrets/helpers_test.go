package secrets

import (
	"sync"
	"testing"

	"github.com/codelotse/codelotse/ports"
)

type findingT = ports.SecretFinding

var (
	sharedOnce sync.Once
	shared     *Scanner
	sharedErr  error
)

func newScanner(tb testing.TB) *Scanner {
	tb.Helper()
	sharedOnce.Do(func() { shared, sharedErr = New() })
	if sharedErr != nil {
		tb.Fatal(sharedErr)
	}
	return shared
}
