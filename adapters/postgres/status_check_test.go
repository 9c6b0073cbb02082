package postgres_test

import (
	"regexp"
	"slices"
	"testing"

	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/domain/review"
)

// TestStatusChecksAreTheDomainsClosedSets: the CHECK constraints of
// review_runs.status and mcp_tool_calls.status (the one on that column
// alone: review_runs' times per status are TestReviewRunChecksAreTheLoaders')
// admit exactly the states and call statuses of domain/review, so a status
// the domain adds or drops cannot drift from what the database stores.
func TestStatusChecksAreTheDomainsClosedSets(t *testing.T) {
	db := pgtest.New(t)
	allowed := func(table string) []string {
		t.Helper()
		var defs []string
		err := db.Bun().NewRaw(`
			SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
			JOIN pg_class r ON r.oid = c.conrelid JOIN pg_namespace n ON n.oid = r.relnamespace
			JOIN pg_attribute a ON a.attrelid = r.oid AND a.attname = 'status'
			WHERE c.contype = 'c' AND r.relname = ? AND n.nspname = current_schema()
			  AND c.conkey = ARRAY[a.attnum]`, table).Scan(t.Context(), &defs)
		if err != nil || len(defs) != 1 {
			t.Fatalf("%s: status CHECK constraints %q, %v; want one", table, defs, err)
		}
		var values []string
		for _, m := range regexp.MustCompile(`'([a-z_]+)'::text`).FindAllStringSubmatch(defs[0], -1) {
			values = append(values, m[1])
		}
		slices.Sort(values)
		return values
	}
	strs := func(in ...string) []string { slices.Sort(in); return in }
	var runs, calls []string
	for _, s := range review.RunStatuses() {
		runs = append(runs, string(s))
	}
	for _, s := range review.CallStatuses() {
		calls = append(calls, string(s))
	}
	if got, want := allowed("review_runs"), strs(runs...); !slices.Equal(got, want) {
		t.Errorf("review_runs.status admits %v, the domain has %v", got, want)
	}
	if got, want := allowed("mcp_tool_calls"), strs(calls...); !slices.Equal(got, want) {
		t.Errorf("mcp_tool_calls.status admits %v, the domain has %v", got, want)
	}
}
