// Package auditstream holds the rules of the audit stream, the copy of
// every audit event and call record sent to the operator's webhook: the
// secret that signs it and the backoff of a failed delivery.
package auditstream

import (
	"encoding/base64"
	"errors"
	"strings"
	"time"
)

// secretPrefix begins a Standard Webhooks secret: "whsec_" and the key in
// base64.
const secretPrefix = "whsec_"

// The key lengths Standard Webhooks allow, in bytes.
const (
	MinKeyBytes = 24
	MaxKeyBytes = 64
)

// ErrSecret is the error of a secret that is not "whsec_" and 24 to 64
// bytes in base64.
var ErrSecret = errors.New("must be whsec_ followed by 24 to 64 bytes in base64")

// ParseSecret reads a Standard Webhooks secret into its key.
func ParseSecret(s string) ([]byte, error) {
	b64, ok := strings.CutPrefix(s, secretPrefix)
	if !ok {
		return nil, ErrSecret
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	// The decoder skips line breaks and ignores the unused bits of the
	// last character: only the one canonical spelling of a key is taken.
	if err != nil || len(key) < MinKeyBytes || len(key) > MaxKeyBytes || base64.StdEncoding.EncodeToString(key) != b64 {
		return nil, ErrSecret
	}
	return key, nil
}

// The backoff of a failed delivery.
const (
	// RetryFirst is the wait after an entry's first failed delivery; it
	// doubles with every failure, up to RetryMax. So a sink that is back
	// gets its backlog within RetryMax and a job period.
	RetryFirst = time.Second
	RetryMax   = 5 * time.Minute
)

// RetryDelay is the wait after an entry's attempts-th failed delivery.
func RetryDelay(attempts int) time.Duration {
	d := RetryFirst
	for i := 1; i < attempts && d < RetryMax; i++ {
		d *= 2
	}
	return min(d, RetryMax)
}
