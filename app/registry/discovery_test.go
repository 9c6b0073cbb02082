package registry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

// fakeConnector serves tool lists per URL and records what it was asked.
type fakeConnector struct {
	tools   map[string][]ports.ListedTool
	err     error
	opened  []ports.MCPTarget
	caps    []int64
	closed  int
	listing int
	// whileListing runs inside ListTools: what happens to the server
	// between the live discovery and the store.
	whileListing func()
	// ttl is every listing's cache hint.
	ttl time.Duration
}

func (c *fakeConnector) Open(_ context.Context, t ports.MCPTarget, cap int64) (ports.MCPSession, error) {
	c.opened = append(c.opened, t)
	c.caps = append(c.caps, cap)
	if c.err != nil {
		return nil, c.err
	}
	return &fakeSession{c: c, url: t.URL.String()}, nil
}

type fakeSession struct {
	c   *fakeConnector
	url string
}

func (s *fakeSession) ListTTL() time.Duration { return s.c.ttl }

func (s *fakeSession) ListTools(context.Context) ([]ports.ListedTool, error) {
	s.c.listing++
	if s.c.whileListing != nil {
		s.c.whileListing()
	}
	return s.c.tools[s.url], nil
}

func (s *fakeSession) CallTool(context.Context, string, tool.Arguments) (ports.ToolResult, error) {
	return ports.ToolResult{}, fmt.Errorf("fake: not used")
}

func (s *fakeSession) Close() error { s.c.closed++; return nil }

func def(t *testing.T, name, desc, schema, ann string) ports.ListedTool {
	t.Helper()
	var a json.RawMessage
	if ann != "" {
		a = json.RawMessage(ann)
	}
	d, err := tool.NewDefinition(name, desc, json.RawMessage(schema), a)
	if err != nil {
		t.Fatalf("NewDefinition(%s): %v", name, err)
	}
	return ports.ListedTool{Name: name, Description: desc, Definition: d}
}

const (
	flatSchema   = `{"type":"object","properties":{"query":{"type":"string","description":"what to look for"}},"required":["query"]}`
	nestedSchema = `{"type":"object","properties":{"filter":{"type":"object","properties":{"a":{"type":"string"}}}}}`
	readOnly     = `{"readOnlyHint":true}`
)

type discoveryEnv struct {
	*serverEnv
	conn *fakeConnector
	deps registry.DiscoveryDeps
	url  string
}

func newDiscoveryEnv(t *testing.T) (*discoveryEnv, string) {
	e := &discoveryEnv{serverEnv: newServerEnv(t), url: "https://wiki.example.com/mcp"}
	e.conn = &fakeConnector{tools: map[string][]ports.ListedTool{e.url: {
		def(t, "search", "Search the wiki.", flatSchema, readOnly),
		def(t, "edit", "Edit a page.", flatSchema, `{"readOnlyHint":false}`),
		def(t, "filter", "Filter.", nestedSchema, readOnly),
		{Name: "deep", Description: "Too deep.", Err: &tool.UnsupportedError{Reason: "unsupported schema: nested too deeply"}},
	}}}
	e.deps = registry.DiscoveryDeps{Tenants: e.tenants, Cipher: app.NewVault(e.cipher), Connector: e.conn, Clock: e.clock, Gates: srvOpenGates, Findings: registry.NewFindings(portfake.Scanner{})}
	s := e.create(t, srvPrincipalA, srvBearerCmd("wiki", e.url))
	e.repos[srvTenantA].Clock = e.clock
	return e, s.ID()
}

func (e *discoveryEnv) discover(id string) ([]registry.DiscoveredTool, error) {
	return registry.NewDiscoverServerHandler(e.deps).Handle(context.Background(), srvPrincipalA, registry.DiscoverServer{ID: id})
}

func (e *discoveryEnv) save(id string, choices ...registry.ToolChoice) error {
	_, err := registry.NewSaveToolsHandler(e.deps).Handle(context.Background(), srvPrincipalA, registry.SaveTools{ID: id, Tools: choices})
	return err
}

func TestDiscoverAssessesEveryLiveTool(t *testing.T) {
	e, id := newDiscoveryEnv(t)
	got, err := e.discover(id)
	if err != nil {
		t.Fatalf("discover: %v", err)
	}
	want := map[string]struct {
		supported, write bool
		reason           string
	}{
		"search": {true, false, ""},
		"edit":   {true, true, ""},
		"filter": {false, false, "unsupported schema"},
		"deep":   {false, true, "unsupported schema: nested too deeply"},
	}
	if len(got) != len(want) {
		t.Fatalf("discover listed %d tools, want %d", len(got), len(want))
	}
	for i, a := range got {
		w := want[a.Name]
		if a.Supported != w.supported || a.WriteCapable != w.write || !strings.HasPrefix(a.Reason, w.reason) || (w.reason == "") != (a.Reason == "") {
			t.Errorf("%s: supported=%v write=%v reason=%q, want %+v", a.Name, a.Supported, a.WriteCapable, a.Reason, w)
		}
		if lt := e.conn.tools[e.url][i]; lt.Err == nil && a.Hash != tool.Hash(lt.Definition) {
			t.Errorf("%s: hash %s is not the definition's", a.Name, a.Hash)
		}
	}
	if e.conn.caps[0] != limits.DiscoveryResponseCap {
		t.Errorf("discovery cap = %d, want %d", e.conn.caps[0], limits.DiscoveryResponseCap)
	}
	if e.conn.opened[0].Credential.Hint() == "" || e.conn.opened[0].Credential.HeaderValue() != "Bearer "+srvSecretToken {
		t.Errorf("the connector did not get the decrypted credential")
	}
	if e.conn.closed != 1 {
		t.Errorf("sessions closed = %d, want 1", e.conn.closed)
	}
	s, _ := registry.NewGetServerHandler(e.serverEnv.deps).Handle(context.Background(), srvPrincipalA, registry.GetServer{ID: id})
	if s.LastDiscoveryAt().IsZero() || s.LastError() != "" {
		t.Errorf("after discovery lastDiscoveryAt=%v lastError=%q", s.LastDiscoveryAt(), s.LastError())
	}
	ev := e.audit(srvTenantA)
	if last := ev[len(ev)-1]; last.Action != registry.ActionServerDiscover || last.Target != id || last.Actor != "token:tok-a" {
		t.Errorf("last audit event = %+v, want a discover event", last)
	}
}

func TestDiscoverIsThrottledPerServer(t *testing.T) {
	e, id := newDiscoveryEnv(t)
	if _, err := e.discover(id); err != nil {
		t.Fatal(err)
	}
	e.clock.At = e.clock.At.Add(4 * time.Second)
	_, err := e.discover(id)
	ae := srvWantCode(t, err, app.CodeDiscoveryThrottled)
	if ae.RetryAfter <= 0 || ae.RetryAfter > limits.DiscoveryInterval {
		t.Errorf("RetryAfter = %v, want within (0, 10 s]", ae.RetryAfter)
	}
	if len(e.conn.opened) != 1 {
		t.Errorf("a throttled discovery reached the network (%d opens)", len(e.conn.opened))
	}
	e.clock.At = e.clock.At.Add(limits.DiscoveryInterval)
	if _, err := e.discover(id); err != nil {
		t.Errorf("discovery 14 s later: %v", err)
	}
}

func TestDiscoveryGates(t *testing.T) {
	tests := []struct {
		name  string
		gates app.Gates
		code  app.Code
	}{
		{"not signed off", app.Gates{SignedOff: false, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}, app.CodeNotSignedOff},
		{"instance disabled", app.Gates{SignedOff: true, Instance: gate.InstanceDisabled, Edition: gate.SelfHosted}, app.CodeInstanceDisabled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, id := newDiscoveryEnv(t)
			e.deps.Gates = tt.gates
			_, err := e.discover(id)
			srvWantCode(t, err, tt.code)
			srvWantCode(t, e.save(id, registry.ToolChoice{Name: "search", Description: "Search."}), tt.code)
			if len(e.conn.opened) != 0 {
				t.Errorf("closed gates reached the network")
			}
		})
	}
}

func TestDiscoveryFailuresAreFixedCodes(t *testing.T) {
	tests := []struct {
		err       error
		code      app.Code
		lastError string
	}{
		{ports.ErrServerUnreachable, app.CodeServerUnreachable, "server_unreachable"},
		{ports.ErrServerUnauthorized, app.CodeServerUnauthorized, "server_unauthorized"},
		{ports.ErrTimeout, app.CodeTimeout, "timeout"},
		{ports.ErrResponseTooLarge, app.CodeResponseTooLarge, "response_too_large"},
		{ports.ErrProtocol, app.CodeProtocolError, "protocol_error"},
		{ports.ErrRedirectRefused, app.CodeServerUnreachable, "redirect_refused"},
		{ports.ErrAddressBlocked, app.CodeServerUnreachable, "address_blocked"},
		{fmt.Errorf("dial tcp wiki.example.com:443: %w", ports.ErrServerUnreachable), app.CodeServerUnreachable, "server_unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.lastError, func(t *testing.T) {
			e, id := newDiscoveryEnv(t)
			e.conn.err = tt.err
			_, err := e.discover(id)
			srvWantCode(t, err, tt.code, "wiki.example.com", e.url)
			s, _ := registry.NewGetServerHandler(e.serverEnv.deps).Handle(context.Background(), srvPrincipalA, registry.GetServer{ID: id})
			if s.LastError() != tt.lastError {
				t.Errorf("lastError = %q, want %q", s.LastError(), tt.lastError)
			}
		})
	}
}

func TestSaveToolsAllowlistsFromTheLiveResult(t *testing.T) {
	e, id := newDiscoveryEnv(t)
	// The server changes its description after the admin's discovery: the
	// save pins what is live at save time.
	live := def(t, "search", "Search the wiki (v2).", flatSchema, readOnly)
	e.conn.tools[e.url][0] = live
	if err := e.save(id, registry.ToolChoice{Name: "search", Description: "Searches \u200bthe wiki.\u202e"},
		registry.ToolChoice{Name: "edit", Description: "Edits.", ConfirmWrite: true}); err != nil {
		t.Fatalf("save: %v", err)
	}
	s, _ := registry.NewGetServerHandler(e.serverEnv.deps).Handle(context.Background(), srvPrincipalA, registry.GetServer{ID: id})
	tools := s.Tools()
	if len(tools) != 2 || tools[0].Name() != "search" || tools[1].Name() != "edit" {
		t.Fatalf("stored tools = %v", tools)
	}
	if tools[0].Hash() != tool.Hash(live.Definition) || !tools[0].Matches(live.Definition) {
		t.Errorf("stored hash %s, want the live definition's %s", tools[0].Hash(), tool.Hash(live.Definition))
	}
	if tools[0].Description() != "Searches the wiki." {
		t.Errorf("stored description %q, want the sanitised admin text", tools[0].Description())
	}
	if !tools[1].WriteCapable() {
		t.Errorf("edit stored as read-only")
	}
	ev := e.audit(srvTenantA)
	if last := ev[len(ev)-1]; last.Action != registry.ActionServerTools {
		t.Errorf("last audit event %q, want %q", last.Action, registry.ActionServerTools)
	}
	// Not throttled: a second save right away discovers again.
	if err := e.save(id, registry.ToolChoice{Name: "search", Description: "Search."}); err != nil {
		t.Errorf("second save: %v", err)
	}
	if e.conn.listing != 2 {
		t.Errorf("live listings = %d, want one per save", e.conn.listing)
	}
}

func TestSaveToolsRefusals(t *testing.T) {
	many := make([]registry.ToolChoice, limits.MaxToolsPerServer+1)
	for i := range many {
		many[i] = registry.ToolChoice{Name: fmt.Sprintf("t%d", i), Description: "d"}
	}
	tests := []struct {
		name    string
		choices []registry.ToolChoice
		code    app.Code
	}{
		{"unknown tool", []registry.ToolChoice{{Name: "delete_everything", Description: "d"}}, app.CodeUnknownTool},
		{"nested schema", []registry.ToolChoice{{Name: "filter", Description: "d"}}, app.CodeUnsupportedSchema},
		{"unreadable definition", []registry.ToolChoice{{Name: "deep", Description: "d", ConfirmWrite: true}}, app.CodeUnsupportedSchema},
		{"write without confirmation", []registry.ToolChoice{{Name: "edit", Description: "d"}}, app.CodeWriteNotConfirmed},
		{"21 tools", many, app.CodeTooManyTools},
		{"long description", []registry.ToolChoice{{Name: "search", Description: strings.Repeat("x", limits.MaxToolDescriptionLen+1)}}, app.CodeValidationFailed},
		{"empty description", []registry.ToolChoice{{Name: "search", Description: "\u200b "}}, app.CodeValidationFailed},
		{"duplicate", []registry.ToolChoice{{Name: "search", Description: "a"}, {Name: "search", Description: "b"}}, app.CodeValidationFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, id := newDiscoveryEnv(t)
			srvWantCode(t, e.save(id, tt.choices...), tt.code)
			s, _ := registry.NewGetServerHandler(e.serverEnv.deps).Handle(context.Background(), srvPrincipalA, registry.GetServer{ID: id})
			if len(s.Tools()) != 0 {
				t.Errorf("a refused save stored %d tools", len(s.Tools()))
			}
		})
	}
}

// TestSaveToolsRefusesWhenTheURLChangedMeanwhile: a PATCH moves the server
// to another URL while the save's live discovery runs. The save answers
// 422 unknown_tool (no discovery of the current URL offered those tools)
// and stores nothing: the allowlist stays as the URL change left it
// (empty), and no allowlist audit event is written.
func TestSaveToolsRefusesWhenTheURLChangedMeanwhile(t *testing.T) {
	e, id := newDiscoveryEnv(t)
	if err := e.save(id, registry.ToolChoice{Name: "search", Description: "Search."}); err != nil {
		t.Fatalf("first save: %v", err)
	}
	moved := "https://wiki.example.com/other-mcp"
	ack := true
	e.conn.whileListing = func() {
		e.conn.whileListing = nil
		if _, err := registry.NewPatchServerHandler(e.serverEnv.deps).Handle(context.Background(), srvPrincipalA,
			registry.PatchServer{ID: id, URL: &moved, Acknowledged: &ack}); err != nil {
			t.Errorf("PATCH url during the save: %v", err)
		}
	}
	events := len(e.audit(srvTenantA))
	err := e.save(id, registry.ToolChoice{Name: "search", Description: "Search."}, registry.ToolChoice{Name: "edit", Description: "Edits.", ConfirmWrite: true})
	srvWantCode(t, err, app.CodeUnknownTool, e.url, moved)
	s, _ := registry.NewGetServerHandler(e.serverEnv.deps).Handle(context.Background(), srvPrincipalA, registry.GetServer{ID: id})
	if s.URL().String() != moved || len(s.Tools()) != 0 {
		t.Errorf("after the raced save: url %s, %d tools; want %s and the allowlist the URL change emptied", s.URL(), len(s.Tools()), moved)
	}
	for _, ev := range e.audit(srvTenantA)[events:] {
		if ev.Action == registry.ActionServerTools {
			t.Errorf("the refused save wrote an audit event: %+v", ev)
		}
	}
}

func TestDiscoveryHidesOtherTenantsServers(t *testing.T) {
	e, id := newDiscoveryEnv(t)
	ctx := context.Background()
	_, err := registry.NewDiscoverServerHandler(e.deps).Handle(ctx, srvPrincipalB, registry.DiscoverServer{ID: id})
	srvWantCode(t, err, app.CodeNotFound)
	_, err = registry.NewSaveToolsHandler(e.deps).Handle(ctx, srvPrincipalB, registry.SaveTools{ID: id, Tools: []registry.ToolChoice{{Name: "search", Description: "d"}}})
	srvWantCode(t, err, app.CodeNotFound)
	_, err = registry.NewListCallsHandler(e.deps).Handle(ctx, srvPrincipalB, registry.ListCalls{ID: id})
	srvWantCode(t, err, app.CodeNotFound)
	if len(e.conn.opened) != 0 {
		t.Errorf("a foreign id reached the network")
	}
}

func TestListCallsNewestFirst(t *testing.T) {
	e, id := newDiscoveryEnv(t)
	ctx := context.Background()
	_ = e.tenants.InTenant(ctx, srvTenantA, func(ctx context.Context, tx ports.TenantTx) error {
		for i := range limits.RecentCalls + 5 {
			_ = tx.Calls().Record(ctx, ports.ToolCall{ServerID: id, Tool: fmt.Sprint(i), Status: "ok"})
		}
		return nil
	})
	got, err := registry.NewListCallsHandler(e.deps).Handle(ctx, srvPrincipalA, registry.ListCalls{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != limits.RecentCalls || got[0].Tool != fmt.Sprint(limits.RecentCalls+4) {
		t.Errorf("ListCalls = %d records starting at %q, want %d newest first", len(got), got[0].Tool, limits.RecentCalls)
	}
}
