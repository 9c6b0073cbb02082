//go:build signedoff

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/mcpclient/localpki"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Helpers of the end-to-end tests: go-sdk MCP servers over TLS on
// loopback, reached by the binary as https://localhost:<port>/mcp through
// the private-host list, with a CA the binary trusts via SSL_CERT_FILE.

const (
	era2026 = "2026-07-28" // server/discover, stateless
	era2025 = "2025-11-25" // the initialize handshake
)

// e2ePKI is a CA and a leaf for localhost and 127.0.0.1, made once.
var e2ePKI = sync.OnceValue(func() *localpki.PKI {
	p, err := localpki.New("localhost")
	if err != nil {
		panic(err)
	}
	return p
})

// mcpEnv is the environment of an instance that allows MCP context, lists
// localhost as a private host, trusts the test CA and has a key ring. The
// key is returned so the caller can record it as a secret.
func mcpEnv(t *testing.T, extra ...string) (env []string, key string) {
	t.Helper()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, e2ePKI().CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	_, key = newKey(t)
	env = []string{"SSL_CERT_FILE=" + ca, "QUAVON_MCP_CONTEXT=allowed", "QUAVON_MCP_PRIVATE_HOSTS=localhost",
		"QUAVON_ENCRYPTION_KEYS=k1:" + key}
	return append(env, extra...), key
}

// wireRequest is one HTTP request an MCP peer received.
type wireRequest struct {
	At         time.Time
	HTTPMethod string
	Header     http.Header
	Path       string
	Body       []byte
	RPCMethod  string // the JSON-RPC method ("" for a response or a non-POST)
}

// peer is an MCP server (or any handler) over TLS on loopback that keeps
// every request it receives.
type peer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []wireRequest
}

// startTLS serves h over TLS with the test leaf and records every request.
func startTLS(t *testing.T, h http.Handler) *peer {
	t.Helper()
	p := &peer{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &m)
		p.mu.Lock()
		p.reqs = append(p.reqs, wireRequest{At: time.Now(), HTTPMethod: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, RPCMethod: m.Method})
		p.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{e2ePKI().Leaf}}
	srv.StartTLS()
	p.Server = srv
	t.Cleanup(srv.Close)
	return p
}

// url is https://localhost:<port>/mcp.
func (p *peer) url() string {
	_, port, _ := net.SplitHostPort(p.Listener.Addr().String())
	return "https://localhost:" + port + "/mcp"
}

func (p *peer) requests() []wireRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]wireRequest(nil), p.reqs...)
}

// count is the number of requests received so far.
func (p *peer) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.reqs)
}

// rpcMethods lists the JSON-RPC methods of reqs (the HTTP method for
// requests without a body, such as the session's DELETE).
func rpcMethods(reqs []wireRequest) []string {
	var out []string
	for _, r := range reqs {
		if r.HTTPMethod != http.MethodPost {
			out = append(out, r.HTTPMethod)
			continue
		}
		out = append(out, r.RPCMethod)
	}
	return out
}

// mcpPeer is a go-sdk MCP server pinned to one protocol era.
type mcpPeer struct {
	*peer
	era string
	srv *mcp.Server

	mu   sync.Mutex
	args []json.RawMessage // arguments of every tools/call the handlers ran
}

// startMCP serves a go-sdk server pinned to era: the 2026-07-28 era with
// the stateless handler (server/discover), the 2025 era with the stateful
// one (initialize). add registers its tools.
func startMCP(t *testing.T, era string, add func(p *mcpPeer)) *mcpPeer {
	t.Helper()
	p, h := newMCP(era, add)
	p.peer = startTLS(t, h)
	return p
}

// newMCP is startMCP without the listener: the go-sdk server and its
// Streamable HTTP handler, for a caller that serves it on a path of its
// own (the red-team suite's hostile server). p.peer is nil then.
func newMCP(era string, add func(p *mcpPeer)) (*mcpPeer, http.Handler) {
	p := &mcpPeer{era: era}
	p.srv = mcp.NewServer(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{era},
	})
	if add != nil {
		add(p)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.srv }, &mcp.StreamableHTTPOptions{
		Stateless:                  era == era2026,
		DisableLocalhostProtection: true,
	})
	return p, h
}

func (p *mcpPeer) calledWith() []json.RawMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]json.RawMessage(nil), p.args...)
}

// addTool adds (or replaces) a tool that records its arguments and
// answers text.
func (p *mcpPeer) addTool(name, description string, schema map[string]any, ann *mcp.ToolAnnotations, answer string) {
	p.addToolFunc(name, description, schema, ann, func() *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: answer}}}
	})
}

// addToolFunc adds (or replaces) a tool that records its arguments and
// answers what result returns.
func (p *mcpPeer) addToolFunc(name, description string, schema map[string]any, ann *mcp.ToolAnnotations, result func() *mcp.CallToolResult) {
	p.srv.AddTool(&mcp.Tool{Name: name, Description: description, InputSchema: schema, Annotations: ann},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p.mu.Lock()
			p.args = append(p.args, append(json.RawMessage(nil), req.Params.Arguments...))
			p.mu.Unlock()
			return result(), nil
		})
}

// searchSchema is the flat schema of the read-only search tool.
func searchSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "description": "What to look for."},
		},
		"required": []any{"query"},
	}
}

func readOnly() *mcp.ToolAnnotations { return &mcp.ToolAnnotations{ReadOnlyHint: true} }

// checkNoClientCapabilities fails t unless every request carries the
// bearer token, no request advertises a client capability (initialize
// capabilities {} or absent; the 2026 per-request client capabilities {}),
// and the requests of the 2026 era carry the per-request capabilities.
func checkNoClientCapabilities(t *testing.T, era, bearer string, reqs []wireRequest) {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatal("the MCP server received no request")
	}
	for _, r := range reqs {
		if got := r.Header.Get("Authorization"); got != "Bearer "+bearer {
			t.Errorf("%s %s: Authorization = %q, want the bearer token", r.HTTPMethod, r.RPCMethod, got)
		}
		if r.HTTPMethod != http.MethodPost {
			continue
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				Meta            map[string]json.RawMessage `json:"_meta"`
				Capabilities    *json.RawMessage           `json:"capabilities"`
				ProtocolVersion string                     `json:"protocolVersion"`
			} `json:"params"`
		}
		if err := json.Unmarshal(r.Body, &m); err != nil {
			t.Errorf("request body %q: %v", r.Body, err)
			continue
		}
		for _, word := range []string{"roots", "sampling", "elicitation"} {
			if strings.Contains(string(r.Body), word) {
				t.Errorf("%s mentions %q: %s", m.Method, word, r.Body)
			}
		}
		if m.Method == "initialize" {
			if m.Params.Capabilities != nil && string(*m.Params.Capabilities) != "{}" {
				t.Errorf("initialize capabilities = %s, want {}", *m.Params.Capabilities)
			}
			if m.Params.ProtocolVersion != era2025 {
				t.Errorf("initialize protocolVersion = %q, want %s", m.Params.ProtocolVersion, era2025)
			}
		}
		caps, has := m.Params.Meta[mcp.MetaKeyClientCapabilities]
		if has && string(caps) != "{}" {
			t.Errorf("%s _meta client capabilities = %s, want {}", m.Method, caps)
		}
		if era == era2026 && m.Method != "" && !has {
			t.Errorf("%s (2026 era) carries no per-request client capabilities: %s", m.Method, r.Body)
		}
	}
}

// registerServer registers an MCP server with a bearer token and returns
// its id.
func registerServer(t *testing.T, c *client, name, url, bearer string) string {
	t.Helper()
	auth := map[string]any{"type": "none"}
	if bearer != "" {
		auth = map[string]any{"type": "bearer", "token": bearer}
		c.in.secret(bearer)
	}
	r := c.do("POST", "/v1/mcp/servers", map[string]any{"name": name, "url": url, "auth": auth, "acknowledged": true})
	if r.Status != http.StatusCreated {
		t.Fatalf("register %s: %d %s", name, r.Status, r.Raw)
	}
	return str(r.Body, "id")
}

// discovered returns the tools of a discovery answer by name.
func discovered(t *testing.T, r response) map[string]map[string]any {
	t.Helper()
	list, ok := r.Body["tools"].([]any)
	if !ok {
		t.Fatalf("discovery answer without tools: %s", r.Raw)
	}
	out := map[string]map[string]any{}
	for _, x := range list {
		m := x.(map[string]any)
		out[str(m, "name")] = m
	}
	return out
}

// snapshots returns a ServerView's allowlisted tools by name.
func snapshots(t *testing.T, r response) map[string]map[string]any {
	t.Helper()
	list, ok := r.Body["tools"].([]any)
	if !ok {
		t.Fatalf("ServerView without tools: %s", r.Raw)
	}
	out := map[string]map[string]any{}
	for _, x := range list {
		m := x.(map[string]any)
		out[str(m, "name")] = m
	}
	return out
}

// auditActions returns the tenant's latest audit events.
func auditEvents(t *testing.T, c *client, limit int) []map[string]any {
	t.Helper()
	r := c.do("GET", fmt.Sprintf("/v1/audit?limit=%d", limit), nil)
	expect(t, "GET /v1/audit", r, 200, "")
	var out []map[string]any
	list, _ := r.Body["events"].([]any)
	for _, e := range list {
		out = append(out, e.(map[string]any))
	}
	return out
}

// calls returns a server's call records.
func calls(t *testing.T, c *client, serverID string) []map[string]any {
	t.Helper()
	r := c.do("GET", "/v1/mcp/servers/"+serverID+"/calls", nil)
	expect(t, "GET …/calls", r, 200, "")
	list, ok := r.Body["calls"].([]any)
	if !ok {
		t.Fatalf("calls answer without a calls array: %s", r.Raw)
	}
	var out []map[string]any
	for _, x := range list {
		out = append(out, x.(map[string]any))
	}
	return out
}

// sha256Hex is the lowercase hex SHA-256 of s.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// dumpDatabase returns every row of every table outside the system
// schemas as text, one per line, prefixed with its table.
func dumpDatabase(t *testing.T, in *instance) string {
	t.Helper()
	return dumpDatabaseExcept(t, in, nil)
}

// dumpDatabaseExcept is dumpDatabase without the columns named in except
// (table name without its schema → columns), dumped as JSON rows: the
// red-team suite leaves out the review's own input, which holds its
// canary by design.
func dumpDatabaseExcept(t *testing.T, in *instance, except map[string][]string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := in.db()
	rows, err := conn.Query(ctx, `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name)
		FROM information_schema.tables
		WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(tables) == 0 {
		t.Fatal("the database has no tables")
	}
	var b strings.Builder
	for _, table := range tables {
		row := "t::text"
		if cols, ok := except[table[strings.LastIndex(table, ".")+1:]]; ok {
			row = "to_jsonb(t)"
			for _, c := range cols {
				row += " - '" + c + "'"
			}
			row = "(" + row + ")::text"
		}
		rows, err := conn.Query(ctx, "SELECT "+row+" FROM "+table+" t")
		if err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			b.WriteString(table + " " + line + "\n")
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatalf("dump %s: %v", table, err)
		}
	}
	return b.String()
}

// metric returns the value of a sample of GET /metrics (-1 when absent).
func metric(t *testing.T, in *instance, sample string) float64 {
	t.Helper()
	resp, err := http.Get(in.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d", resp.StatusCode)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, sample+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err == nil {
				return v
			}
		}
	}
	return -1
}
