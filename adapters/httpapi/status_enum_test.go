package httpapi

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/review"
)

// TestStatusEnumsAreTheDomainsClosedSets: openapi.yaml's enums of a tool
// call's status (ToolCall) and of a review's status (Review) are exactly
// the sets of domain/review, which the API answers unchanged.
func TestStatusEnumsAreTheDomainsClosedSets(t *testing.T) {
	spec, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	enums := regexp.MustCompile(`(?m)^\s+status: \{type: string, enum: \[([a-z_, ]+)\]\}`).FindAllStringSubmatch(string(spec), -1)
	has := func(want []string) bool {
		for _, e := range enums {
			if slices.Equal(strings.Split(e[1], ", "), want) {
				return true
			}
		}
		return false
	}
	var calls, runs []string
	for _, s := range review.CallStatuses() {
		calls = append(calls, string(s))
	}
	for _, s := range review.RunStatuses() {
		runs = append(runs, string(s))
	}
	if !has(calls) {
		t.Errorf("openapi.yaml has no status enum %v (ToolCall); enums: %v", calls, enums)
	}
	if !has(runs) {
		t.Errorf("openapi.yaml has no status enum %v (Review); enums: %v", runs, enums)
	}
}
