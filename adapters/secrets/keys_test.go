package secrets

import (
	"slices"
	"testing"

	"github.com/codelotse/codelotse/domain/egress"
)

// TestSecretKeysCoverTheGenericRule: every keyword by which the rule set
// names a secret-holding key (generic-api-key's) is one of the keys whose
// assigned values the egress taint keeps, so the two lists cannot drift.
func TestSecretKeysCoverTheGenericRule(t *testing.T) {
	cfg, err := parseConfig(gitleaksTOML)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range cfg.Rules {
		if r.ID != "generic-api-key" {
			continue
		}
		found = true
		for _, k := range r.Keywords {
			if !slices.Contains(egress.SecretKeys, k) {
				t.Errorf("generic-api-key's keyword %q is not in egress.SecretKeys", k)
			}
		}
	}
	if !found {
		t.Fatal("no generic-api-key rule in the rule set")
	}
}
