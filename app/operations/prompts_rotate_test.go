package operations_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/operations"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

func TestRotateKeysCoversPromptLogs(t *testing.T) {
	old := &portfake.Cipher{Keys: []string{"k1"}}
	prompts := &portfake.PromptRotator{}
	for i := range 3 {
		review := fmt.Sprintf("77777777-0000-4000-8000-00000000000%d", i)
		sealed, _ := old.Seal([]byte(`{"messages":[]}`), app.PromptLogAAD(review))
		prompts.Logs = append(prompts.Logs, ports.SealedPromptLog{ID: fmt.Sprintf("p%d", i), ReviewID: review, Sealed: sealed})
	}
	prompts.Logs[2].ReviewID = "77777777-0000-4000-8000-000000000009" // moved to another review
	cipher := &portfake.Cipher{Keys: []string{"k2", "k1"}}
	res, err := operations.NewRotateKeysHandler(&portfake.Rotator{Creds: map[string][]byte{}}, prompts, app.NewVault(cipher)).Handle(context.Background(), operations.RotateKeys{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.PromptLogs.Rotated != 2 || res.PromptLogs.Failed != 1 || !slices.Equal(res.PromptLogs.FailedIDs, []string{"p2"}) {
		t.Errorf("prompt logs %+v, want 2 rotated and p2 failed", res.PromptLogs)
	}
	for _, l := range prompts.Logs[:2] {
		if !cipher.IsPrimary(l.Sealed) {
			t.Errorf("log %s not under the primary key", l.ID)
		}
		if _, err := cipher.Open(l.Sealed, app.PromptLogAAD(l.ReviewID)); err != nil {
			t.Errorf("log %s: %v", l.ID, err)
		}
	}
}
