package registry_test

import (
	"context"
	"slices"
	"testing"

	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/server"
)

// TestSaveKeepsAStoredChangedToolTheListingNoLongerOffers: a tool stored
// as changed stays changed, with its stored snapshot, when a save keeps
// it in the selection, also when the save's live listing no longer offers
// it: the save decides by the stored state first (tools_save.go, "A tool
// the stored allowlist has as changed … is kept as stored"), and only
// then by the listing. Without that clause such a tool is unknown_tool,
// and the admin cannot save any other change while the server hides it.
func TestSaveKeepsAStoredChangedToolTheListingNoLongerOffers(t *testing.T) {
	e, id := threeChanged(t)
	if _, err := e.discover(id); err != nil {
		t.Fatal(err)
	}
	before := e.get(t, id)
	if got := toolStates(before); got["search"] != server.ToolChanged {
		t.Fatalf("after the discovery: %v, want search changed", got)
	}
	// The server stops offering search (the changed tool); lookup and
	// fetch are offered as they changed, brand_new is new.
	e.conn.tools[e.url] = e.conn.tools[e.url][1:]

	s, err := registry.NewSaveToolsHandler(e.deps).Handle(context.Background(), srvPrincipalA, registry.SaveTools{ID: id, Tools: []registry.ToolChoice{
		{Name: "search", Description: "Search, new text."}, {Name: "lookup", Description: "Look up."}, {Name: "brand_new", Description: "New."},
	}})
	if err != nil {
		t.Fatalf("save keeping the unlisted changed tool = %v, want it kept", err)
	}
	if got := toolStates(s); len(got) != 3 || got["search"] != server.ToolChanged || got["lookup"] != server.ToolChanged || got["brand_new"] != server.ToolPinned {
		t.Errorf("after the save: %v, want search and lookup changed, brand_new pinned, fetch gone", got)
	}
	old := before.Tools()[0]
	if kept := s.Tools()[0]; kept.Name() != "search" || kept.Hash() != old.Hash() || kept.Description() != old.Description() || !kept.ApprovedAt().Equal(old.ApprovedAt()) {
		t.Errorf("search = %s %s %q, want its stored snapshot %s %q", kept.Name(), kept.Hash(), kept.Description(), old.Hash(), old.Description())
	}
	if s.LastError() != "tool_changed" {
		t.Errorf("lastError = %q, want tool_changed", s.LastError())
	}
	stored := e.get(t, id)
	if got := toolStates(stored); got["search"] != server.ToolChanged {
		t.Errorf("stored: %v, want search still changed", got)
	}
	ev := e.audit(srvTenantA)
	if kept, _ := ev[len(ev)-1].Details["keptChanged"].([]string); !slices.Equal(kept, []string{"search", "lookup"}) {
		t.Errorf("audit keptChanged = %v, want [search lookup]", ev[len(ev)-1].Details["keptChanged"])
	}
}
