//go:build signedoff

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codelotse/codelotse/domain/tool"
)

// End-to-end tests of discovery at the API level: the real binary discovers
// and allowlists the tools of go-sdk MCP servers over TLS on loopback.
// Every discovery of a registration is throttled for 10 s, so each subtest
// registers its own servers.

var hexHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestE2EDiscovery shares one instance among parallel subtests, each with
// its own tenant and servers; the instance's logs must hold no token.
func TestE2EDiscovery(t *testing.T) {
	t.Parallel()
	env, key := mcpEnv(t)
	in := startInstance(t, env...)
	in.secret(key)
	t.Cleanup(func() { in.checkLogsHoldNoSecrets(t) })

	tests := []struct {
		name string
		fn   func(t *testing.T, in *instance)
	}{
		{"discovers and calls tools/" + era2026, func(t *testing.T, in *instance) { testDiscoversTools(t, in, era2026) }},
		{"discovers and calls tools/" + era2025, func(t *testing.T, in *instance) { testDiscoversTools(t, in, era2025) }},
		{"rejects nested, array and odd schemas", testRejectsOddSchemas},
		{"allowlists from the live result", testAllowlistsFromLiveResult},
		{"409 discovery_throttled across replicas", func(t *testing.T, in *instance) { testDiscoveryThrottled(t, in, env) }},
		{"reports unreachable servers without leaking the URL", testUnreachable},
		{"answers protocol_error for a server that does not speak MCP", testProtocolError},
		{"caps the response size", testResponseTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, in.on(t))
		})
	}
}

// discover runs a discovery and fails t unless it answers 200.
func discover(t *testing.T, c *client, id string) map[string]map[string]any {
	t.Helper()
	r := c.do("POST", "/v1/mcp/servers/"+id+"/discover", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("discover = %d %s", r.Status, r.Raw)
	}
	return discovered(t, r)
}

// liveHash is the pin of a tool as discovery listed it, recomputed from
// the listed name, description, schema and annotations.
func liveHash(t *testing.T, name, description string, d map[string]any) string {
	t.Helper()
	schema, _ := json.Marshal(d["inputSchema"])
	ann, _ := json.Marshal(d["annotations"])
	def, err := tool.NewDefinition(name, description, schema, ann)
	if err != nil {
		t.Fatalf("definition of %s: %v", name, err)
	}
	return tool.Hash(def)
}

func testDiscoversTools(t *testing.T, in *instance, era string) {
	_, c := in.tenant("discover-"+era, "tenant:manage")
	writeSchema := map[string]any{"type": "object", "properties": map[string]any{
		"page": map[string]any{"type": "string"}, "text": map[string]any{"type": "string"}}}
	destructive := true
	p := startMCP(t, era, func(p *mcpPeer) {
		p.addTool("search", "Searches the wiki.", searchSchema(), readOnly(), "hit")
		p.addTool("update_page", "Updates a wiki page.", writeSchema, nil, "ok")
		p.addTool("purge", "Purges the cache.", map[string]any{"type": "object"},
			&mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &destructive}, "ok")
		p.addTool("nested", "Takes a filter object.", map[string]any{"type": "object", "properties": map[string]any{
			"filter": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}}},
			readOnly(), "")
		p.addTool("notify", "Notifies someone.", map[string]any{"type": "object", "required": []any{"to"},
			"properties": map[string]any{"to": map[string]any{"type": "string", "format": "email"}}}, readOnly(), "ok")
	})
	bearer := "e2e-bearer-discover-" + strings.ReplaceAll(era, "-", "") + "-Zx81"
	id := registerServer(t, c, "wiki", p.url(), bearer)
	before := time.Now().Add(-time.Second)

	r := c.do("POST", "/v1/mcp/servers/"+id+"/discover", nil)
	expect(t, "discover", r, 200, "")
	expectNoEcho(t, "discover", r, bearer)
	tools := discovered(t, r)
	want := map[string]struct {
		description      string
		supported, write bool
		warning          string
	}{
		"search":      {"Searches the wiki.", true, false, ""},
		"update_page": {"Updates a wiki page.", true, true, ""},
		"purge":       {"Purges the cache.", true, true, ""},
		"nested":      {"Takes a filter object.", false, false, ""},
		"notify":      {"Notifies someone.", true, false, "every call is blocked: property to takes e-mail addresses, which are never sent"},
	}
	if len(tools) != len(want) {
		t.Errorf("discovery lists %d tools, want %d: %s", len(tools), len(want), r.Raw)
	}
	for name, w := range want {
		d, ok := tools[name]
		if !ok {
			t.Errorf("discovery lacks %s: %s", name, r.Raw)
			continue
		}
		if d["supported"] != w.supported || d["writeCapable"] != w.write || str(d, "description") != w.description {
			t.Errorf("%s: supported %v writeCapable %v description %q, want %v %v %q",
				name, d["supported"], d["writeCapable"], str(d, "description"), w.supported, w.write, w.description)
		}
		if warning, has := d["warning"]; w.warning == "" && has || w.warning != "" && warning != w.warning {
			t.Errorf("%s: warning %v, want %q", name, warning, w.warning)
		}
		switch reason, has := d["reason"]; {
		case !has:
			t.Errorf("%s: no reason field", name)
		case w.supported && reason != nil:
			t.Errorf("%s: supported with reason %v", name, reason)
		case !w.supported && !strings.HasPrefix(fmt.Sprint(reason), "unsupported schema"):
			t.Errorf("%s: reason %v, want unsupported schema…", name, reason)
		}
		h := str(d, "hash")
		if !hexHash.MatchString(h) {
			t.Errorf("%s: hash %q is not SHA-256 hex", name, h)
		} else if lh := liveHash(t, name, w.description, d); h != lh {
			t.Errorf("%s: hash %s, the listed definition hashes to %s", name, h, lh)
		}
		if _, ok := d["inputSchema"].(map[string]any); !ok {
			t.Errorf("%s: inputSchema %v is not an object", name, d["inputSchema"])
		}
	}
	if q, _ := tools["search"]["inputSchema"].(map[string]any)["properties"].(map[string]any)["query"].(map[string]any); q["type"] != "string" {
		t.Errorf("search schema = %v", tools["search"]["inputSchema"])
	}
	if ann, _ := tools["search"]["annotations"].(map[string]any); ann["readOnlyHint"] != true {
		t.Errorf("search annotations = %v", tools["search"]["annotations"])
	}

	// The wire: the era's handshake, tools listed, no tool called, the
	// bearer on every request and no client capability anywhere.
	reqs := p.requests()
	methods := rpcMethods(reqs)
	if !slices.Contains(methods, "tools/list") || slices.Contains(methods, "tools/call") {
		t.Errorf("discovery sent %v, want tools/list and no tools/call", methods)
	}
	if era == era2026 && (len(methods) == 0 || methods[0] != "server/discover" || slices.Contains(methods, "initialize")) {
		t.Errorf("2026 era: requests %v, want server/discover first and no initialize", methods)
	}
	if era == era2025 && !slices.Contains(methods, "initialize") {
		t.Errorf("2025 era: requests %v, want the initialize handshake", methods)
	}
	checkNoClientCapabilities(t, era, bearer, reqs)

	g := c.do("GET", "/v1/mcp/servers/"+id, nil)
	expect(t, "GET server", g, 200, "")
	if at := parseTime(t, str(g.Body, "lastDiscoveryAt")); at.Before(before) || at.After(time.Now().Add(time.Second)) {
		t.Errorf("lastDiscoveryAt = %v, want the discovery's time", g.Body["lastDiscoveryAt"])
	}
	if g.Body["lastError"] != nil {
		t.Errorf("lastError = %v after a successful discovery", g.Body["lastError"])
	}
	if n := toolCount(t, g); n != 0 {
		t.Errorf("discovery changed the allowlist: %d tools", n)
	}

	found := false
	for _, e := range auditEvents(t, c, 20) {
		if e["action"] == "server.discover" && e["target"] == id {
			found = true
			details, _ := e["details"].(map[string]any)
			if details["tools"] != float64(len(want)) || details["lastError"] != nil {
				t.Errorf("server.discover details = %v, want %d tools and no error", details, len(want))
			}
		}
	}
	if !found {
		t.Errorf("no server.discover audit event for %s", id)
	}

	// Calls before any review: an empty list; an unknown server: 404.
	cr := c.do("GET", "/v1/mcp/servers/"+id+"/calls", nil)
	expect(t, "GET …/calls", cr, 200, "")
	if strings.TrimSpace(string(cr.Raw)) != `{"calls":[]}` {
		t.Errorf("calls before any review = %s, want {\"calls\":[]}", cr.Raw)
	}
	expect(t, "GET …/calls of an unknown server", c.do("GET", "/v1/mcp/servers/"+randomUUID()+"/calls", nil), 404, "not_found")

	// Allowlisting the read-only tool works in both eras.
	s := c.do("PUT", "/v1/mcp/servers/"+id+"/tools", map[string]any{"tools": []any{
		map[string]any{"name": "search", "description": "Search the team wiki."}}})
	expect(t, "save search", s, 200, "")
	if snap := snapshots(t, s)["search"]; str(snap, "hash") != str(tools["search"], "hash") {
		t.Errorf("saved hash %q, discovered %q", str(snap, "hash"), str(tools["search"], "hash"))
	}
}

func testRejectsOddSchemas(t *testing.T, in *instance) {
	_, c := in.tenant("odd-schemas", "tenant:manage")
	obj := func(props map[string]any, extra ...any) map[string]any {
		m := map[string]any{"type": "object", "properties": props}
		for i := 0; i+1 < len(extra); i += 2 {
			m[extra[i].(string)] = extra[i+1]
		}
		return m
	}
	typ := func(s string) map[string]any { return map[string]any{"type": s} }
	odd := map[string]map[string]any{
		"nested":       obj(map[string]any{"filter": obj(map[string]any{"a": typ("string")})}),
		"nested_typed": obj(map[string]any{"filter": typ("object")}),
		"array":        obj(map[string]any{"tags": map[string]any{"type": "array", "items": typ("string")}}),
		"remote_ref":   obj(map[string]any{"q": map[string]any{"$ref": "https://schemas.example/q.json"}}),
		"ref_object":   obj(map[string]any{"q": map[string]any{"$ref": "#/$defs/q"}}, "$defs", map[string]any{"q": typ("object")}),
		"one_of":       obj(map[string]any{"q": map[string]any{"oneOf": []any{typ("string"), typ("integer")}}}),
		"any_of_top":   obj(map[string]any{"q": typ("string")}, "anyOf", []any{map[string]any{"required": []any{"q"}}}),
		"open":         obj(map[string]any{"q": typ("string")}, "additionalProperties", typ("string")),
		"all_of":       obj(map[string]any{"q": map[string]any{"allOf": []any{typ("string")}}}),
		"mixed_enum":   obj(map[string]any{"level": map[string]any{"enum": []any{"low", 2}}}),
		"lookahead":    obj(map[string]any{"q": map[string]any{"type": "string", "pattern": "a(?=b)"}}),
	}
	flat := obj(map[string]any{
		"q": typ("string"), "n": typ("integer"), "x": typ("number"), "b": typ("boolean"),
		"mode": map[string]any{"type": "string", "enum": []any{"fast", "full"}},
	}, "required", []any{"q"}, "additionalProperties", false)
	longName := strings.Repeat("x", 60)
	p := startMCP(t, era2026, func(p *mcpPeer) {
		for name, schema := range odd {
			p.addTool(name, "An odd tool.", schema, readOnly(), "")
		}
		p.addTool("flat", "A flat tool.", flat, readOnly(), "")
		p.addTool(longName, "A tool with a long name.", flat, readOnly(), "")
	})
	id := registerServer(t, c, "odd", p.url(), "")
	tools := discover(t, c, id)
	if len(tools) != len(odd)+2 {
		t.Errorf("discovery lists %d tools, want %d", len(tools), len(odd)+2)
	}
	for name := range odd {
		d := tools[name]
		reason, _ := d["reason"].(string)
		if d["supported"] != false || !strings.HasPrefix(reason, "unsupported schema") {
			t.Errorf("%s: supported %v reason %q, want false and unsupported schema…", name, d["supported"], reason)
		}
		if !hexHash.MatchString(str(d, "hash")) {
			t.Errorf("%s: hash %q", name, str(d, "hash"))
		}
		r := c.do("PUT", "/v1/mcp/servers/"+id+"/tools", map[string]any{"tools": []any{
			map[string]any{"name": name, "description": "Try it."}}})
		expect(t, "save "+name, r, 422, "unsupported_schema")
	}
	if d := tools["flat"]; d["supported"] != true || d["reason"] != nil || d["writeCapable"] != false {
		t.Errorf("flat: %v", d)
	}
	if d := tools[longName]; d["supported"] != false || !strings.HasPrefix(fmt.Sprint(d["reason"]), "name too long") {
		t.Errorf("long name: supported %v reason %v, want false and name too long…", d["supported"], d["reason"])
	}
	expect(t, "save the long name", c.do("PUT", "/v1/mcp/servers/"+id+"/tools", map[string]any{"tools": []any{
		map[string]any{"name": longName, "description": "Try it."}}}), 422, "unsupported_schema")
	g := c.do("GET", "/v1/mcp/servers/"+id, nil)
	if n := toolCount(t, g); n != 0 {
		t.Errorf("refused saves left %d tools", n)
	}
	s := c.do("PUT", "/v1/mcp/servers/"+id+"/tools", map[string]any{"tools": []any{
		map[string]any{"name": "flat", "description": "A flat tool."}}})
	expect(t, "save flat", s, 200, "")
	if n := toolCount(t, s); n != 1 {
		t.Errorf("save flat: %d tools", n)
	}
}

func testAllowlistsFromLiveResult(t *testing.T, in *instance) {
	_, c := in.tenant("live-allowlist", "tenant:manage")
	const oldDesc, newDesc = "Searches the wiki.", "Searches the wiki and the tickets."
	writeSchema := map[string]any{"type": "object", "properties": map[string]any{"page": map[string]any{"type": "string"}}}
	var extra []string
	p := startMCP(t, era2025, func(p *mcpPeer) {
		p.addTool("search", oldDesc, searchSchema(), readOnly(), "hit")
		p.addTool("update_page", "Updates a page.", writeSchema, &mcp.ToolAnnotations{}, "ok")
		for i := 1; i <= 19; i++ {
			name := fmt.Sprintf("t%02d", i)
			extra = append(extra, name)
			p.addTool(name, "Extra.", searchSchema(), readOnly(), "")
		}
	})
	id := registerServer(t, c, "live", p.url(), "")
	path := "/v1/mcp/servers/" + id + "/tools"
	tools := discover(t, c, id)
	if len(tools) != 21 {
		t.Fatalf("discovery lists %d tools, want 21", len(tools))
	}
	h1 := str(tools["search"], "hash")

	// Schemas, annotations, hashes and verdicts never come from the client.
	for _, field := range []map[string]any{
		{"inputSchema": map[string]any{"type": "object"}},
		{"hash": strings.Repeat("ab", 32)},
		{"annotations": map[string]any{"readOnlyHint": true}},
		{"writeCapable": false},
		{"approvedAt": "2026-01-01T00:00:00Z"},
	} {
		choice := map[string]any{"name": "search", "description": "Search."}
		for k, v := range field {
			choice[k] = v
		}
		r := c.do("PUT", path, map[string]any{"tools": []any{choice}})
		expect(t, fmt.Sprintf("save with %v", field), r, 400, "bad_json")
	}
	if n := toolCount(t, c.do("GET", "/v1/mcp/servers/"+id, nil)); n != 0 {
		t.Errorf("refused saves left %d tools", n)
	}

	// The server changes the tool between discovery and save: the save
	// stores the live definition's hash, not the one discovered earlier.
	p.addTool("search", newDesc, searchSchema(), readOnly(), "hit")
	want := liveHash(t, "search", newDesc, tools["search"])
	if want == h1 {
		t.Fatal("the new description does not change the hash")
	}
	const adminText = "Admin-reviewed: search the team wiki."
	before := time.Now().Add(-time.Second)
	s := c.do("PUT", path, map[string]any{"tools": []any{map[string]any{"name": "search", "description": adminText}}})
	expect(t, "save search", s, 200, "")
	snap := snapshots(t, s)["search"]
	if str(snap, "hash") != want {
		t.Errorf("stored hash %s, want the live %s (discovered earlier: %s)", str(snap, "hash"), want, h1)
	}
	if str(snap, "description") != adminText || snap["writeCapable"] != false {
		t.Errorf("snapshot = %v, want the admin's description and read-only", snap)
	}
	gotSchema, _ := json.Marshal(snap["inputSchema"])
	wantSchema, _ := json.Marshal(tools["search"]["inputSchema"])
	if string(gotSchema) != string(wantSchema) {
		t.Errorf("stored schema %s, live %s", gotSchema, wantSchema)
	}
	if at := parseTime(t, str(snap, "approvedAt")); at.Before(before) {
		t.Errorf("approvedAt = %v", snap["approvedAt"])
	}
	if g := c.do("GET", "/v1/mcp/servers/"+id, nil); str(snapshots(t, g)["search"], "hash") != want {
		t.Errorf("GET after save: %s", g.Raw)
	}

	// A write-capable tool needs confirmWrite.
	both := []any{
		map[string]any{"name": "search", "description": adminText},
		map[string]any{"name": "update_page", "description": "Update a page."},
	}
	expect(t, "save a write tool without confirmWrite", c.do("PUT", path, map[string]any{"tools": both}), 422, "write_not_confirmed")
	if n := toolCount(t, c.do("GET", "/v1/mcp/servers/"+id, nil)); n != 1 {
		t.Errorf("a refused save changed the allowlist: %d tools", n)
	}
	both[1].(map[string]any)["confirmWrite"] = true
	w := c.do("PUT", path, map[string]any{"tools": both})
	expect(t, "save a write tool with confirmWrite", w, 200, "")
	if snap := snapshots(t, w)["update_page"]; snap["writeCapable"] != true {
		t.Errorf("update_page snapshot = %v, want writeCapable", snap)
	}

	expect(t, "save an unknown tool", c.do("PUT", path, map[string]any{"tools": []any{
		map[string]any{"name": "delete_everything", "description": "No."}}}), 422, "unknown_tool")

	// At most 20 tools, counted before anything else.
	var list []any
	list = append(list, both...)
	for _, name := range extra {
		list = append(list, map[string]any{"name": name, "description": "Extra."})
	}
	if len(list) != 21 {
		t.Fatalf("built %d choices", len(list))
	}
	expect(t, "save 21 tools", c.do("PUT", path, map[string]any{"tools": list}), 422, "too_many_tools")
	twenty := c.do("PUT", path, map[string]any{"tools": list[:20]})
	expect(t, "save 20 tools", twenty, 200, "")
	if n := toolCount(t, twenty); n != 20 {
		t.Errorf("save 20 tools: %d stored", n)
	}

	saves := 0
	for _, e := range auditEvents(t, c, 50) {
		if e["action"] == "server.tools" && e["target"] == id {
			saves++
		}
	}
	if saves != 3 {
		t.Errorf("%d server.tools audit events, want 3 (one per successful save)", saves)
	}
}

func testDiscoveryThrottled(t *testing.T, in *instance, env []string) {
	_, c := in.tenant("throttle", "tenant:manage")
	replica := startInstanceOn(t, in.dsn, env...)
	replica.secrets = in.secrets
	r2 := &client{in: replica.on(t), token: c.token}
	t.Cleanup(func() { replica.checkLogsHoldNoSecrets(t) })

	p := startMCP(t, era2026, func(p *mcpPeer) { p.addTool("search", "Searches.", searchSchema(), readOnly(), "") })
	id := registerServer(t, c, "throttled", p.url(), "")
	discover(t, c, id)
	n := p.count()
	checkThrottled := func(what string, r response) {
		t.Helper()
		expect(t, what, r, 409, "discovery_throttled")
		ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
		if err != nil || ra < 1 || ra > 10 {
			t.Errorf("%s: Retry-After %q, want integer seconds 1–10", what, r.Header.Get("Retry-After"))
		}
	}
	checkThrottled("second discover on the same replica", c.do("POST", "/v1/mcp/servers/"+id+"/discover", nil))
	checkThrottled("second discover on the other replica", r2.do("POST", "/v1/mcp/servers/"+id+"/discover", nil))
	if p.count() != n {
		t.Errorf("a throttled discovery reached the server (%d requests, then %d)", n, p.count())
	}

	// A burst across both replicas on a fresh registration: one claim wins.
	id2 := registerServer(t, c, "burst", p.url(), "")
	before := p.requests()
	const burst = 8
	results := make([]response, burst)
	var wg sync.WaitGroup
	for i := range burst {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := c
			if i%2 == 1 {
				cl = r2
			}
			results[i] = cl.do("POST", "/v1/mcp/servers/"+id2+"/discover", nil)
		}()
	}
	wg.Wait()
	ok, throttled := 0, 0
	for i, r := range results {
		switch r.Status {
		case 200:
			ok++
		case 409:
			throttled++
			checkThrottled(fmt.Sprintf("burst request %d", i), r)
		default:
			t.Errorf("burst request %d = %d %s", i, r.Status, r.Raw)
		}
	}
	if ok != 1 || throttled != burst-1 {
		t.Errorf("burst: %d ok and %d throttled, want 1 and %d", ok, throttled, burst-1)
	}
	discovers := 0
	for _, m := range rpcMethods(p.requests()[len(before):]) {
		if m == "server/discover" {
			discovers++
		}
	}
	if discovers != 1 {
		t.Errorf("the burst sent %d server/discover requests, want 1", discovers)
	}
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}

func testUnreachable(t *testing.T, in *instance) {
	_, c := in.tenant("unreachable", "tenant:manage")
	port := closedPort(t)
	url := "https://localhost:" + port + "/mcp"
	id := registerServer(t, c, "gone", url, "")
	r := c.do("POST", "/v1/mcp/servers/"+id+"/discover", nil)
	expect(t, "discover a closed port", r, 502, "server_unreachable")
	expectNoEcho(t, "discover a closed port", r, url, "localhost", port, "127.0.0.1", "::1", "https://", "dial", "connection refused")
	g := c.do("GET", "/v1/mcp/servers/"+id, nil)
	if g.Body["lastError"] != "server_unreachable" || g.Body["lastDiscoveryAt"] == nil {
		t.Errorf("after the failed discovery: lastError %v lastDiscoveryAt %v, want server_unreachable and a time",
			g.Body["lastError"], g.Body["lastDiscoveryAt"])
	}
	for _, e := range auditEvents(t, c, 10) {
		if e["action"] == "server.discover" && e["target"] == id {
			raw, _ := json.Marshal(e)
			if strings.Contains(string(raw), port) || strings.Contains(string(raw), "localhost") {
				t.Errorf("the audit event names the endpoint: %s", raw)
			}
			if d, _ := e["details"].(map[string]any); d["lastError"] != "server_unreachable" {
				t.Errorf("audit details = %v", e["details"])
			}
		}
	}
	// The save discovers live too and fails the same way.
	s := c.do("PUT", "/v1/mcp/servers/"+id+"/tools", map[string]any{"tools": []any{
		map[string]any{"name": "search", "description": "Search."}}})
	expect(t, "save on a closed port", s, 502, "server_unreachable")
	expectNoEcho(t, "save on a closed port", s, url, "localhost", port)
}

func testProtocolError(t *testing.T, in *instance) {
	_, c := in.tenant("protocol-error", "tenant:manage")
	p := startTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `this is not JSON-RPC`)
	}))
	id := registerServer(t, c, "garbage", p.url(), "")
	r := c.do("POST", "/v1/mcp/servers/"+id+"/discover", nil)
	expect(t, "discover a server that answers garbage", r, 502, "protocol_error")
	expectNoEcho(t, "protocol error", r, p.url(), "localhost", "not JSON-RPC")
	if g := c.do("GET", "/v1/mcp/servers/"+id, nil); g.Body["lastError"] != "protocol_error" {
		t.Errorf("lastError = %v, want protocol_error", g.Body["lastError"])
	}
}

func testResponseTooLarge(t *testing.T, in *instance) {
	_, c := in.tenant("too-large", "tenant:manage")
	for _, tc := range []struct {
		era    string
		size   int
		status int
		code   string
	}{
		{era2026, 1<<20 + 4096, 502, "response_too_large"},
		{era2025, 1<<20 + 4096, 502, "response_too_large"},
		{era2026, 900 << 10, 200, ""},
	} {
		desc := strings.Repeat("d", tc.size)
		p := startMCP(t, tc.era, func(p *mcpPeer) { p.addTool("big", desc, searchSchema(), readOnly(), "") })
		name := fmt.Sprintf("big%d_%s", tc.size, strings.ReplaceAll(tc.era, "-", ""))
		id := registerServer(t, c, name[:min(len(name), 24)], p.url(), "")
		r := c.do("POST", "/v1/mcp/servers/"+id+"/discover", nil)
		what := fmt.Sprintf("discovery of %d bytes (%s)", tc.size, tc.era)
		expect(t, what, r, tc.status, tc.code)
		if tc.status == 200 {
			if d := discovered(t, r)["big"]; len(str(d, "description")) != tc.size {
				t.Errorf("%s: description of %d bytes", what, len(str(d, "description")))
			}
			continue
		}
		if len(r.Raw) > 1024 {
			t.Errorf("%s: the error is %d bytes", what, len(r.Raw))
		}
		if g := c.do("GET", "/v1/mcp/servers/"+id, nil); g.Body["lastError"] != "response_too_large" {
			t.Errorf("%s: lastError = %v", what, g.Body["lastError"])
		}
	}
}

// TestE2EDiscoveryTimeout: with QUAVON_MCP_CALL_TIMEOUT_MS=300 a server
// that never answers, one that trickles a byte per second and one that
// sends the headers and then stalls the body fail the discovery with 502
// timeout well before the default 10 s, after one request (no fallback to
// initialize after a timeout).
func TestE2EDiscoveryTimeout(t *testing.T) {
	t.Parallel()
	env, key := mcpEnv(t, "QUAVON_MCP_CALL_TIMEOUT_MS=300")
	in := startInstance(t, env...)
	in.secret(key)
	_, c := in.tenant("timeout", "tenant:manage")

	stop := make(chan struct{})
	silent := startTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	trickle := startTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for _, b := range []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`) {
			if _, err := w.Write([]byte{b}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-stop:
				return
			case <-time.After(time.Second):
			}
		}
	}))
	stall := startTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, `{"jsonrpc":"2.0",`)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(func() { close(stop) }) // before the servers close

	for _, tc := range []struct {
		name string
		p    *peer
	}{{"silent", silent}, {"trickle", trickle}, {"stall", stall}} {
		t.Run(tc.name, func(t *testing.T) {
			c := c.on(t)
			// Several registrations (each discovers once): whether a
			// stalled body ends in an error or a short read is a race in
			// the HTTP client, so one attempt could pass by luck.
			for i := range 5 {
				id := registerServer(t, c, fmt.Sprintf("%s%d", tc.name, i), tc.p.url(), "")
				before := tc.p.count()
				start := time.Now()
				r := c.do("POST", "/v1/mcp/servers/"+id+"/discover", nil)
				took := time.Since(start)
				expect(t, fmt.Sprintf("discover a %s server (attempt %d)", tc.name, i+1), r, 502, "timeout")
				// One request timeout, not two: no initialize after a
				// server/discover that timed out.
				if got := rpcMethods(tc.p.requests()[before:]); len(got) != 1 || got[0] != "server/discover" {
					t.Errorf("attempt %d: the server received %v, want server/discover alone", i+1, got)
				}
				expectNoEcho(t, tc.name, r, tc.p.url(), "localhost")
				if took > 4*time.Second {
					t.Errorf("the discovery took %v with a 300 ms timeout per request", took)
				}
				if g := c.do("GET", "/v1/mcp/servers/"+id, nil); g.Body["lastError"] != "timeout" {
					t.Errorf("attempt %d: lastError = %v, want timeout", i+1, g.Body["lastError"])
				}
				t.Logf("%s attempt %d: %d %s after %v", tc.name, i+1, r.Status, r.code(), took)
			}
		})
	}
}
