package postgres_test

import (
	"context"
	"testing"

	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
)

// A row stored before the server's definition and the tools' states were
// kept (migration 20261210090000_tool_states) still loads: its tools are
// pinned, without a server definition, and nothing was listed.
func TestOlderToolRowsLoadWithoutAServerDefinition(t *testing.T) {
	f := newFixture(t)
	tenant := f.tenant(t, "acme")
	s := newServer(t, tenant, "wiki", server.NoCredential())
	d, err := tool.NewDefinition("search", "Searches.", []byte(`{"type":"object","properties":{"q":{"type":"string"}}}`), []byte(`{"readOnlyHint":true}`))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tool.NewSnapshot("wiki", d, "Search.", now)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceTools([]tool.Snapshot{snap}, now); err != nil {
		t.Fatal(err)
	}
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error { return tx.Servers().Insert(ctx, s, nil, 20) })
	// Rows are written by hand past row-level security, as the superuser.
	su := pgtest.Superuser(t, f.db)

	// The row as the code before the migration wrote it.
	old := `[{"name":"search","description":"Search.","inputSchema":{"properties":{"q":{"type":"string"}},"type":"object"},` +
		`"annotations":{"readOnlyHint":true},"writeCapable":false,"hash":"` + snap.Hash() + `","approvedAt":"2026-11-30T09:00:00Z"}]`
	if _, err := su.Bun().ExecContext(t.Context(), "UPDATE mcp_servers SET tools = ?::jsonb, listed_tools = NULL WHERE id = ?", old, s.ID()); err != nil {
		t.Fatal(err)
	}
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Servers().Get(ctx, s.ID())
		if err != nil {
			return err
		}
		if len(got.Tools()) != 1 || got.Tools()[0].Hash() != snap.Hash() || got.ToolStatus("search").State != server.ToolPinned {
			t.Errorf("the older row loads as %v", got.Tools())
		}
		if _, ok := got.Tools()[0].ServerDefinition(); ok {
			t.Error("an older row has a server definition")
		}
		if _, ok := got.Listed(); ok {
			t.Error("an older row has a listing")
		}
		return nil
	})

	// A server description the pin does not cover is not shown as the
	// approved one.
	tampered := `[{"name":"search","description":"Search.","inputSchema":{"properties":{"q":{"type":"string"}},"type":"object"},` +
		`"annotations":{"readOnlyHint":true},"writeCapable":false,"hash":"` + snap.Hash() + `","approvedAt":"2026-11-30T09:00:00Z","serverDescription":"Tampered."}]`
	if _, err := su.Bun().ExecContext(t.Context(), "UPDATE mcp_servers SET tools = ?::jsonb WHERE id = ?", tampered, s.ID()); err != nil {
		t.Fatal(err)
	}
	f.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Servers().Get(ctx, s.ID())
		if err != nil {
			return err
		}
		if _, ok := got.Tools()[0].ServerDefinition(); ok {
			t.Error("a tampered server description was loaded")
		}
		return nil
	})

	// The CHECK refuses an unknown state.
	bogus := `[{"name":"search","description":"Search.","inputSchema":{"type":"object"},"annotations":null,"writeCapable":true,"hash":"` +
		snap.Hash() + `","approvedAt":"2026-11-30T09:00:00Z","state":"pinned-by-hand"}]`
	if _, err := su.Bun().ExecContext(t.Context(), "UPDATE mcp_servers SET tools = ?::jsonb WHERE id = ?", bogus, s.ID()); err == nil {
		t.Error("the database stored an unknown tool state")
	}
}
