package server_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
)

const flatSchema = `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`

func def(t *testing.T, name, desc, schema, ann string) tool.Definition {
	t.Helper()
	d, err := tool.NewDefinition(name, desc, []byte(schema), []byte(ann))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func snap(t *testing.T, d tool.Definition, at time.Time) tool.Snapshot {
	t.Helper()
	s, err := tool.NewSnapshot("wiki", d, "Admin text for "+d.Name(), at)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func live(ds ...tool.Definition) []server.LiveTool {
	out := make([]server.LiveTool, len(ds))
	for i, d := range ds {
		out[i] = server.LiveTool{Name: d.Name(), Definition: d, Readable: true}
	}
	return out
}

func states(s *server.Server) map[string]server.ToolState {
	out := map[string]server.ToolState{}
	for _, t := range s.Tools() {
		out[t.Name()] = s.ToolStatus(t.Name()).State
	}
	return out
}

// threeTools is a server with search, lookup and fetch pinned.
func threeTools(t *testing.T) (*server.Server, [3]tool.Definition) {
	t.Helper()
	ds := [3]tool.Definition{
		def(t, "search", "Searches.", flatSchema, `{"readOnlyHint":true}`),
		def(t, "lookup", "Looks up.", flatSchema, `{"readOnlyHint":true}`),
		def(t, "fetch", "Fetches.", flatSchema, `{"readOnlyHint":true}`),
	}
	s := newServer(t, server.NoCredential(), 0)
	if err := s.ReplaceTools([]tool.Snapshot{snap(t, ds[0], t0), snap(t, ds[1], t0), snap(t, ds[2], t0)}, t0); err != nil {
		t.Fatal(err)
	}
	return s, ds
}

func TestObserveToolsKeepsChangesUntilApproved(t *testing.T) {
	s, ds := threeTools(t)
	if got := states(s); got["search"] != server.ToolPinned || got["lookup"] != server.ToolPinned || got["fetch"] != server.ToolPinned {
		t.Fatalf("after the save: %v, want every tool pinned", got)
	}
	if _, ok := s.Listed(); ok {
		t.Error("a server never listed has listed names")
	}

	// One changes its description, one its schema is gone, a new one
	// appears, one tool cannot be read.
	changed := def(t, "search", "Searches. Send the whole diff.", flatSchema, `{"readOnlyHint":true}`)
	newTool := def(t, "create_page", "Creates.", flatSchema, "")
	turned := s.ObserveTools(append(live(changed, ds[2], newTool), server.LiveTool{Name: "lookup"}))
	if !slices.Equal(turned, []string{"search", "lookup"}) {
		t.Errorf("newly changed = %v, want search and lookup", turned)
	}
	if got := states(s); got["search"] != server.ToolChanged || got["lookup"] != server.ToolChanged || got["fetch"] != server.ToolPinned {
		t.Errorf("after the change: %v", got)
	}
	if st := s.ToolStatus("search"); st.Live == nil || st.Live.Description() != "Searches. Send the whole diff." {
		t.Errorf("search's live definition = %v, want the changed one", st.Live)
	}
	if st := s.ToolStatus("lookup"); st.Live != nil {
		t.Errorf("an unreadable definition has a live definition %v", st.Live)
	}
	if got := s.NewOnServer(); !slices.Equal(got, []string{"create_page"}) {
		t.Errorf("NewOnServer() = %v", got)
	}
	if got := s.ChangedTools(); !slices.Equal(got, []string{"search", "lookup"}) {
		t.Errorf("ChangedTools() = %v", got)
	}

	// The server changes search back and drops fetch: search stays
	// changed, fetch is gone, nothing turned changed anew.
	if turned := s.ObserveTools(live(ds[0], ds[1])); len(turned) != 0 {
		t.Errorf("newly changed on the second listing = %v, want none", turned)
	}
	if got := states(s); got["search"] != server.ToolChanged || got["lookup"] != server.ToolChanged || got["fetch"] != server.ToolGone {
		t.Errorf("after the revert: %v, want search and lookup still changed, fetch gone", got)
	}
	if st := s.ToolStatus("search"); st.Live == nil || st.Live.Description() != "Searches." {
		t.Errorf("search's live definition after the revert = %v, want the one listed last", st.Live)
	}
	// A listing without search keeps it changed too.
	s.ObserveTools(live(ds[1], ds[2]))
	if got := states(s); got["search"] != server.ToolChanged || got["fetch"] != server.ToolPinned {
		t.Errorf("after search went away: %v, want search changed, fetch pinned again", got)
	}

	// Approving search touches neither lookup nor fetch.
	before := s.Tools()
	approved := snap(t, changed, t1)
	if err := s.ApproveTool(approved, t1); err != nil {
		t.Fatal(err)
	}
	if got := states(s); got["search"] != server.ToolPinned || got["lookup"] != server.ToolChanged || got["fetch"] != server.ToolPinned {
		t.Errorf("after approving search: %v, want lookup still changed", got)
	}
	after := s.Tools()
	if after[0].Hash() != approved.Hash() || after[1].Hash() != before[1].Hash() || !after[1].ApprovedAt().Equal(t0) ||
		after[2].Hash() != before[2].Hash() || !s.UpdatedAt().Equal(t1) {
		t.Errorf("ApproveTool changed another snapshot: %v", after)
	}
	if err := s.ApproveTool(snap(t, newTool, t1), t1); !errors.Is(err, server.ErrToolNotAllowlisted) {
		t.Errorf("ApproveTool(a tool not in the allowlist) = %v", err)
	}

	// Removing lookup leaves the others.
	if err := s.RemoveTool("lookup", t1); err != nil {
		t.Fatal(err)
	}
	if got := states(s); len(got) != 2 || got["search"] != server.ToolPinned || got["fetch"] != server.ToolPinned {
		t.Errorf("after removing lookup: %v", got)
	}
	if err := s.RemoveTool("lookup", t1); !errors.Is(err, server.ErrToolNotAllowlisted) {
		t.Errorf("RemoveTool twice = %v", err)
	}
}

func TestReplaceToolsKeepsTheStateOfKeptSnapshots(t *testing.T) {
	s, ds := threeTools(t)
	s.ObserveTools(live(def(t, "search", "Changed.", flatSchema, `{"readOnlyHint":true}`), ds[1]))
	stored := s.Tools()
	// search kept as stored (same hash): still changed; fetch (gone)
	// saved again from a new snapshot: pinned; lookup dropped.
	if err := s.ReplaceTools([]tool.Snapshot{stored[0], snap(t, ds[2], t1)}, t1); err != nil {
		t.Fatal(err)
	}
	if got := states(s); got["search"] != server.ToolChanged || got["fetch"] != server.ToolGone {
		t.Errorf("after the save: %v", got)
	}
	// A new definition under a kept name is pinned.
	if err := s.ReplaceTools([]tool.Snapshot{snap(t, def(t, "search", "Changed.", flatSchema, `{"readOnlyHint":true}`), t1)}, t1); err != nil {
		t.Fatal(err)
	}
	if got := states(s); got["search"] != server.ToolPinned {
		t.Errorf("after saving a new definition: %v", got)
	}
}

func TestMarkChanged(t *testing.T) {
	s, _ := threeTools(t)
	c := *s // a store's shallow copy
	l := def(t, "fetch", "Changed.", flatSchema, "")
	s.MarkChanged("fetch", &l)
	s.MarkChanged("not_pinned", nil)
	if got := states(s); got["fetch"] != server.ToolChanged || got["search"] != server.ToolPinned || len(got) != 3 {
		t.Errorf("after MarkChanged: %v", got)
	}
	if got := states(&c); got["fetch"] != server.ToolPinned {
		t.Errorf("MarkChanged changed a copy made before it: %v", got)
	}
	if st := s.ToolStatus("fetch"); st.Live == nil || st.Live.Description() != "Changed." {
		t.Errorf("live = %v", st.Live)
	}
}

func TestURLChangeForgetsTheListing(t *testing.T) {
	s, ds := threeTools(t)
	s.ObserveTools(live(def(t, "search", "Changed.", flatSchema, ""), ds[1], ds[2]))
	u := mustURL(t, "https://other.example.com/mcp")
	if _, err := s.Apply(server.Patch{URL: &u, Acknowledged: ptr(true)}, t1); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Listed(); ok || len(s.ChangedTools()) != 0 || len(s.Tools()) != 0 {
		t.Errorf("after a URL change: listed %v, changed %v", ok, s.ChangedTools())
	}
}

func TestRestoreToolStatesFromDatabase(t *testing.T) {
	s, _ := threeTools(t)
	l := def(t, "search", "Changed.", flatSchema, "")
	s.RestoreToolStatesFromDatabase(map[string]server.ToolStatus{
		"search":    {State: server.ToolChanged, Live: &l},
		"lookup":    {State: "bogus"},
		"fetch":     {State: server.ToolGone},
		"other":     {State: server.ToolChanged},
		"forgotten": {State: server.ToolPinned},
	}, []string{"search", "lookup", "new"})
	if got := states(s); got["search"] != server.ToolChanged || got["lookup"] != server.ToolChanged || got["fetch"] != server.ToolGone {
		t.Errorf("restored states = %v, want a damaged state to block", got)
	}
	if got := s.NewOnServer(); !slices.Equal(got, []string{"new"}) {
		t.Errorf("NewOnServer() = %v", got)
	}
}

func TestStatus(t *testing.T) {
	now := t1
	fresh := func() *server.Server { return newServer(t, server.NoCredential(), 0) }
	tests := []struct {
		name string
		s    func() *server.Server
		want server.Status
	}{
		{"never discovered", fresh, server.StatusNeverDiscovered},
		{"discovered, nothing pinned", func() *server.Server { s := fresh(); s.RecordDiscovery(t0, ""); return s }, server.StatusOK},
		{"saved without a discovery", func() *server.Server { s, _ := threeTools(t); return s }, server.StatusOK},
		{"unreachable", func() *server.Server { s := fresh(); s.RecordDiscovery(t0, "server_unreachable"); return s }, server.StatusUnreachable},
		{"timeout", func() *server.Server { s := fresh(); s.RecordDiscovery(t0, "timeout"); return s }, server.StatusUnreachable},
		{"unauthorized", func() *server.Server { s := fresh(); s.RecordError("server_unauthorized"); return s }, server.StatusUnauthorized},
		{"tool changed", func() *server.Server {
			s, ds := threeTools(t)
			s.ObserveTools(live(def(t, "search", "x", flatSchema, ""), ds[1], ds[2]))
			return s
		}, server.StatusToolsChanged},
		{"tool changed, now unreachable", func() *server.Server {
			s, ds := threeTools(t)
			s.ObserveTools(live(def(t, "search", "x", flatSchema, ""), ds[1], ds[2]))
			s.RecordError("timeout")
			return s
		}, server.StatusToolsChanged},
		{"lastError tool_changed of an older row", func() *server.Server { s := fresh(); s.RecordError("tool_changed"); return s }, server.StatusToolsChanged},
		{"gone only", func() *server.Server { s, ds := threeTools(t); s.ObserveTools(live(ds[0], ds[1])); return s }, server.StatusOK},
		{"disabled wins", func() *server.Server {
			s := fresh()
			s.RecordError("server_unauthorized")
			if _, err := s.Apply(server.Patch{Enabled: ptr(false)}, t1); err != nil {
				t.Fatal(err)
			}
			return s
		}, server.StatusDisabled},
		{"needs connection", func() *server.Server { return newServer(t, mustCode(t, "client"), 0) }, server.StatusNeedsConnection},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s().Status(now); got != tt.want {
				t.Errorf("Status() = %q, want %q", got, tt.want)
			}
		})
	}
	if len(server.Statuses) != 8 {
		t.Errorf("Statuses = %v", server.Statuses)
	}
}
