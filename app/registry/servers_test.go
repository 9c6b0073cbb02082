package registry_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

const (
	srvTenantA = "aaaaaaaa-0000-4000-8000-000000000001"
	srvTenantB = "bbbbbbbb-0000-4000-8000-000000000002"
	// srvSecretToken is the credential every leak check greps for.
	srvSecretToken = "sk-live-SUPERSECRET-wxyz"
)

var (
	srvT0         = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	srvPrincipalA = ports.Principal{TokenID: "tok-a", TenantID: srvTenantA, Permissions: []string{"tenant:manage"}}
	srvPrincipalB = ports.Principal{TokenID: "tok-b", TenantID: srvTenantB, Permissions: []string{"tenant:manage"}}
	srvOpenGates  = app.Gates{SignedOff: true, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}
)

// serverEnv wires the server use cases to fakes.
type serverEnv struct {
	deps     registry.ServerDeps
	tenants  *portfake.Tenants
	repos    map[string]*portfake.Servers
	resolver *portfake.Resolver
	cipher   *portfake.Cipher
	clock    *portfake.Clock
}

func srvAddrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

func newServerEnv(t *testing.T) *serverEnv {
	t.Helper()
	ph, err := netpolicy.ParsePrivateHosts("wiki.corp.example")
	if err != nil {
		t.Fatal(err)
	}
	e := &serverEnv{
		repos: map[string]*portfake.Servers{},
		resolver: &portfake.Resolver{Addrs: map[string][]netip.Addr{
			"wiki.example.com":  srvAddrs("93.184.216.34", "2606:2800:220:1::1"),
			"docs.example.com":  srvAddrs("93.184.216.35"),
			"evil.example":      srvAddrs("93.184.216.36"),
			"as.example.com":    srvAddrs("93.184.216.38"),
			"wiki.corp.example": srvAddrs("10.0.0.5"),
			"intra.example":     srvAddrs("10.0.0.6"),
			"mixed.example":     srvAddrs("93.184.216.37", "169.254.169.254"),
			"empty.example":     {},
		}},
		cipher: &portfake.Cipher{Keys: []string{"k1"}},
		clock:  &portfake.Clock{At: srvT0},
	}
	e.tenants = &portfake.Tenants{NewTx: func(tenantID string) *portfake.Tx {
		r := portfake.NewServers()
		e.repos[tenantID] = r
		return &portfake.Tx{ServerRepo: r}
	}}
	n := 0
	e.deps = registry.ServerDeps{
		Tenants:  e.tenants,
		Cipher:   app.NewVault(e.cipher),
		Resolver: e.resolver,
		Clock:    e.clock,
		Gates:    srvOpenGates,
		Rules:    netpolicy.NewRules(gate.SelfHosted, ph),
		NewID: func() string {
			n++
			return fmt.Sprintf("%08x-1111-4111-8111-111111111111", n)
		},
	}
	return e
}

func (e *serverEnv) audit(tenantID string) []ports.AuditEvent {
	tx, ok := e.tenants.Txs[tenantID]
	if !ok {
		return nil
	}
	return tx.AuditLog.Events
}

func (e *serverEnv) create(t *testing.T, p ports.Principal, cmd registry.CreateServer) *server.Server {
	t.Helper()
	s, err := registry.NewCreateServerHandler(e.deps).Handle(context.Background(), p, cmd)
	if err != nil {
		t.Fatalf("CreateServer(%s) = %v", cmd.Name, err)
	}
	return s
}

func srvBearerCmd(name, url string) registry.CreateServer {
	return registry.CreateServer{Name: name, URL: url, Auth: registry.ServerAuth{Type: "bearer", Token: srvSecretToken}, Acknowledged: true}
}

func srvNoneCmd(name, url string) registry.CreateServer {
	return registry.CreateServer{Name: name, URL: url, Auth: registry.ServerAuth{Type: "none"}, Acknowledged: true}
}

// wantCode fails unless err is an *app.Error with code; it also checks
// that nothing secret or URL-like is in the error text.
func srvWantCode(t *testing.T, err error, code app.Code, forbidden ...string) *app.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("error = nil, want code %s", code)
	}
	e := app.AsError(err)
	if e.Code != code {
		t.Fatalf("error = %v, want code %s", err, code)
	}
	for _, s := range append(forbidden, srvSecretToken) {
		if s != "" && (strings.Contains(e.Message, s) || strings.Contains(fmt.Sprint(e.Fields), s)) {
			t.Errorf("error %q (fields %v) contains %q", e.Message, e.Fields, s)
		}
	}
	return e
}

func TestCreateServer(t *testing.T) {
	e := newServerEnv(t)
	s := e.create(t, srvPrincipalA, srvBearerCmd("wiki", "https://wiki.example.com/mcp"))

	if s.Name().String() != "wiki" || s.URL().String() != "https://wiki.example.com/mcp" || !s.Enabled() ||
		s.CredentialKind() != server.KindBearer || s.CredentialHint() != "Bearer …wxyz" ||
		!s.AcknowledgedAt().Equal(srvT0) || s.TenantID() != srvTenantA || !s.CreatedAt().Equal(srvT0) {
		t.Errorf("CreateServer() = %+v", s)
	}

	// The credential is stored sealed for this row only.
	stored := e.repos[srvTenantA].Creds[s.ID()]
	if strings.Contains(string(stored), srvSecretToken) {
		t.Fatalf("stored credential holds the plaintext")
	}
	plain, err := e.cipher.Open(stored, []byte("mcp_servers:"+s.ID()))
	if err != nil {
		t.Fatalf("Open(mcp_servers:<id>) = %v", err)
	}
	cred, err := server.UnmarshalCredentialSecret(plain)
	if err != nil || cred.HeaderValue() != "Bearer "+srvSecretToken {
		t.Errorf("stored credential = %v, %v", cred, err)
	}
	if _, err := e.cipher.Open(stored, []byte("mcp_servers:other")); err == nil {
		t.Errorf("the credential opens with another row's associated data")
	}

	events := e.audit(srvTenantA)
	if len(events) != 1 {
		t.Fatalf("audit = %v, want one event", events)
	}
	ev := events[0]
	if ev.Action != "server.create" || ev.Actor != "token:tok-a" || ev.Target != s.ID() || !ev.At.Equal(srvT0) {
		t.Errorf("audit event = %+v", ev)
	}
	want := map[string]any{"name": "wiki", "authType": "bearer", "hint": "Bearer …wxyz"}
	if fmt.Sprint(ev.Details) != fmt.Sprint(want) {
		t.Errorf("audit details = %v, want %v", ev.Details, want)
	}
	if out := fmt.Sprintf("%+v %#v %v", ev, ev, s); strings.Contains(out, srvSecretToken) || strings.Contains(out, "SUPERSECRET") {
		t.Errorf("audit event or server prints the secret: %s", out)
	}
	if strings.Contains(fmt.Sprint(ev.Details), "https://") {
		t.Errorf("audit details hold the URL: %v", ev.Details)
	}

	// Servers without a credential store none and need no key.
	e.cipher.Keys = nil
	n := e.create(t, srvPrincipalA, srvNoneCmd("docs", "https://docs.example.com/"))
	if _, ok := e.repos[srvTenantA].Creds[n.ID()]; ok || n.HasCredential() || n.CredentialHint() != "" {
		t.Errorf("none auth stored a credential")
	}
	if d := e.audit(srvTenantA)[1].Details; fmt.Sprint(d) != fmt.Sprint(map[string]any{"name": "docs", "authType": "none"}) {
		t.Errorf("audit details for none = %v", d)
	}

	// A header credential.
	e.cipher.Keys = []string{"k1"}
	h := e.create(t, srvPrincipalA, registry.CreateServer{Name: "jira", URL: "https://evil.example/", Acknowledged: true,
		Auth: registry.ServerAuth{Type: "header", Name: "X-Api-Key", Value: srvSecretToken}})
	if h.CredentialHint() != "x-api-key …wxyz" {
		t.Errorf("header hint = %q", h.CredentialHint())
	}
}

func TestCreateServerErrors(t *testing.T) {
	closed := func(g app.Gates) func(e *serverEnv) { return func(e *serverEnv) { e.deps.Gates = g } }
	tests := []struct {
		name   string
		setup  func(e *serverEnv)
		cmd    registry.CreateServer
		code   app.Code
		fields []string
	}{
		{name: "not signed off", setup: closed(app.Gates{SignedOff: false, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}),
			cmd: srvBearerCmd("wiki", "https://wiki.example.com/mcp"), code: app.CodeNotSignedOff},
		{name: "instance disabled", setup: closed(app.Gates{SignedOff: true, Instance: gate.InstanceDisabled, Edition: gate.SelfHosted}),
			cmd: srvBearerCmd("wiki", "https://wiki.example.com/mcp"), code: app.CodeInstanceDisabled},
		{name: "both closed reports sign-off", setup: closed(app.Gates{}),
			cmd: srvBearerCmd("Bad Name", "http://x"), code: app.CodeNotSignedOff},
		{name: "bad name", cmd: srvBearerCmd("Wiki", "https://wiki.example.com/mcp"), code: app.CodeValidationFailed, fields: []string{"name"}},
		{name: "all fields at once", cmd: registry.CreateServer{Name: "1x", URL: "http://wiki.example.com", Auth: registry.ServerAuth{Type: "bearer"}, Acknowledged: true},
			code: app.CodeValidationFailed, fields: []string{"name", "url", "auth.token"}},
		{name: "http url", cmd: srvBearerCmd("wiki", "http://wiki.example.com/mcp"), code: app.CodeValidationFailed, fields: []string{"url"}},
		{name: "auth type missing", cmd: registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/", Acknowledged: true},
			code: app.CodeValidationFailed, fields: []string{"auth.type"}},
		{name: "auth type oauth", cmd: registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/", Acknowledged: true, Auth: registry.ServerAuth{Type: "oauth"}},
			code: app.CodeValidationFailed, fields: []string{"auth.type"}},
		{name: "bearer with crlf", cmd: registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/", Acknowledged: true,
			Auth: registry.ServerAuth{Type: "bearer", Token: srvSecretToken + "\r\nX-Evil: 1"}}, code: app.CodeValidationFailed, fields: []string{"auth.token"}},
		{name: "bearer with header name", cmd: registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/", Acknowledged: true,
			Auth: registry.ServerAuth{Type: "bearer", Token: srvSecretToken, Name: "x-a"}}, code: app.CodeValidationFailed, fields: []string{"auth.name"}},
		{name: "header authorization", cmd: registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/", Acknowledged: true,
			Auth: registry.ServerAuth{Type: "header", Name: "Authorization", Value: srvSecretToken}}, code: app.CodeValidationFailed, fields: []string{"auth.name"}},
		{name: "header cookie", cmd: registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/", Acknowledged: true,
			Auth: registry.ServerAuth{Type: "header", Name: "cookie", Value: srvSecretToken}}, code: app.CodeValidationFailed, fields: []string{"auth.name"}},
		{name: "header without value", cmd: registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/", Acknowledged: true,
			Auth: registry.ServerAuth{Type: "header", Name: "x-api-key"}}, code: app.CodeValidationFailed, fields: []string{"auth.value"}},
		{name: "header with token", cmd: registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/", Acknowledged: true,
			Auth: registry.ServerAuth{Type: "header", Name: "x-api-key", Value: "v", Token: srvSecretToken}}, code: app.CodeValidationFailed, fields: []string{"auth.token"}},
		{name: "none with token", cmd: registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/", Acknowledged: true,
			Auth: registry.ServerAuth{Type: "none", Token: srvSecretToken}}, code: app.CodeValidationFailed, fields: []string{"auth.token"}},
		{name: "none with header value", cmd: registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/", Acknowledged: true,
			Auth: registry.ServerAuth{Type: "none", Value: srvSecretToken}}, code: app.CodeValidationFailed, fields: []string{"auth.value"}},
		{name: "not acknowledged", cmd: registry.CreateServer{Name: "wiki", URL: "https://wiki.example.com/", Auth: registry.ServerAuth{Type: "none"}},
			code: app.CodeAcknowledgementRequired},
		{name: "private host unlisted", cmd: srvNoneCmd("wiki", "https://intra.example/mcp"), code: app.CodeEndpointNotPublic},
		{name: "public decoy with metadata address", cmd: srvNoneCmd("wiki", "https://mixed.example/mcp"), code: app.CodeEndpointNotPublic},
		{name: "no addresses", cmd: srvNoneCmd("wiki", "https://empty.example/mcp"), code: app.CodeEndpointNotPublic},
		{name: "lookup fails", cmd: srvNoneCmd("wiki", "https://nx.example/mcp"), code: app.CodeEndpointNotPublic},
		{name: "no resolver", setup: func(e *serverEnv) { e.deps.Resolver = nil }, cmd: srvNoneCmd("wiki", "https://wiki.example.com/mcp"), code: app.CodeEndpointNotPublic},
		{name: "keys unavailable", setup: func(e *serverEnv) { e.cipher.Keys = nil }, cmd: srvBearerCmd("wiki", "https://wiki.example.com/mcp"), code: app.CodeKeysUnavailable},
		{name: "no cipher", setup: func(e *serverEnv) { e.deps.Cipher = app.Vault{} }, cmd: srvBearerCmd("wiki", "https://wiki.example.com/mcp"), code: app.CodeKeysUnavailable},
		{name: "name taken", setup: func(e *serverEnv) {
			e.create(&testing.T{}, srvPrincipalA, srvNoneCmd("wiki", "https://docs.example.com/"))
		}, cmd: srvBearerCmd("wiki", "https://wiki.example.com/mcp"), code: app.CodeNameTaken},
		{name: "too many servers", setup: func(e *serverEnv) {
			for i := range limits.MaxServersPerTenant {
				e.create(&testing.T{}, srvPrincipalA, srvNoneCmd(fmt.Sprintf("s%d", i), "https://docs.example.com/"))
			}
		}, cmd: srvBearerCmd("wiki", "https://wiki.example.com/mcp"), code: app.CodeTooManyServers},
		{name: "store down", setup: func(e *serverEnv) {
			e.create(&testing.T{}, srvPrincipalA, srvNoneCmd("first", "https://docs.example.com/"))
			e.repos[srvTenantA].Err = errors.New("connection refused")
		}, cmd: srvBearerCmd("wiki", "https://wiki.example.com/mcp"), code: app.CodeInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newServerEnv(t)
			if tt.setup != nil {
				tt.setup(e)
			}
			before := len(e.audit(srvTenantA))
			_, err := registry.NewCreateServerHandler(e.deps).Handle(context.Background(), srvPrincipalA, tt.cmd)
			got := srvWantCode(t, err, tt.code, "example", "169.254", "10.0.0")
			for _, f := range tt.fields {
				if _, ok := got.Fields[f]; !ok {
					t.Errorf("fields = %v, want %q", got.Fields, f)
				}
			}
			if len(got.Fields) != len(tt.fields) {
				t.Errorf("fields = %v, want exactly %v", got.Fields, tt.fields)
			}
			if strings.Contains(err.Error(), srvSecretToken) {
				t.Errorf("error chain %q holds the secret", err)
			}
			if n := len(e.audit(srvTenantA)); n != before {
				t.Errorf("a refused create wrote %d audit events", n-before)
			}
		})
	}
}

// TestCreateServerGatesBeforeLookup: a closed gate refuses before any DNS
// lookup leaves the instance (MC10).
func TestCreateServerGatesBeforeLookup(t *testing.T) {
	e := newServerEnv(t)
	e.deps.Gates = app.Gates{Instance: gate.InstanceAllowed}
	_, err := registry.NewCreateServerHandler(e.deps).Handle(context.Background(), srvPrincipalA, srvBearerCmd("wiki", "https://wiki.example.com/"))
	srvWantCode(t, err, app.CodeNotSignedOff)
	if len(e.resolver.Lookups) != 0 {
		t.Errorf("lookups under a closed gate: %v", e.resolver.Lookups)
	}
}

func TestCreateServerHostileURLs(t *testing.T) {
	tests := []struct {
		url  string
		code app.Code
	}{
		{"https://user:pass@wiki.example.com/mcp", app.CodeValidationFailed},
		{"https://@wiki.example.com/mcp", app.CodeValidationFailed},
		{"https://wiki.example.com/mcp?token=SUPERSECRET", app.CodeValidationFailed},
		{"https://wiki.example.com/mcp#frag", app.CodeValidationFailed},
		{"file:///etc/passwd", app.CodeValidationFailed},
		{"stdio://npx", app.CodeValidationFailed},
		{"javascript:alert(1)", app.CodeValidationFailed},
		{"https://2130706433/", app.CodeValidationFailed},
		{"https://0x7f.1/", app.CodeValidationFailed},
		{"https://017.0.0.1/", app.CodeValidationFailed},
		{"https://[fe80::1%25eth0]/", app.CodeValidationFailed},
		{"https://wiki.example.com\r\n/mcp", app.CodeValidationFailed},
		{"https://" + strings.Repeat("a", limits.MaxURLLen) + ".example/", app.CodeValidationFailed},
		{"https://127.0.0.1/", app.CodeEndpointNotPublic},
		{"https://169.254.169.254/latest/meta-data", app.CodeEndpointNotPublic},
		{"https://[::ffff:169.254.169.254]/", app.CodeEndpointNotPublic},
		{"https://[fd00:ec2::254]/", app.CodeEndpointNotPublic},
		{"https://[64:ff9b::a9fe:a9fe]/", app.CodeEndpointNotPublic},
		{"https://0.0.0.0/", app.CodeEndpointNotPublic},
		{"https://[::]/", app.CodeEndpointNotPublic},
		{"https://100.100.100.200/", app.CodeEndpointNotPublic},
		{"https://localhost/", app.CodeEndpointNotPublic},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			e := newServerEnv(t)
			_, err := registry.NewCreateServerHandler(e.deps).Handle(context.Background(), srvPrincipalA, srvBearerCmd("wiki", tt.url))
			host := tt.url
			if _, rest, ok := strings.Cut(tt.url, "://"); ok {
				host = rest
			}
			got := srvWantCode(t, err, tt.code, tt.url, "SUPERSECRET", "169.254", "passwd", host)
			if tt.code == app.CodeValidationFailed {
				if _, ok := got.Fields["url"]; !ok || len(got.Fields) != 1 {
					t.Errorf("fields = %v, want url only", got.Fields)
				}
			}
			if r := e.repos[srvTenantA]; r != nil && len(r.Rows) != 0 {
				t.Errorf("a hostile URL was stored")
			}
		})
	}
}

// TestChecksURLsPerEdition is MC1 at the use-case level: what a listed
// private host may resolve to on each edition.
func TestChecksURLsPerEdition(t *testing.T) {
	tests := []struct {
		addr       string
		selfListed bool // allowed on self-hosted when the host is listed
	}{
		{"10.0.0.5", true},
		{"127.0.0.1", true},
		{"::1", true},
		{"fd00::1", true},
		{"169.254.169.254", false},
		{"fd00:ec2::254", false},
		{"224.0.0.1", false},
		{"0.0.0.1", false},
	}
	ph, _ := netpolicy.ParsePrivateHosts("listed.corp.example")
	for _, edition := range []gate.Edition{gate.SelfHosted, gate.Enterprise} {
		for _, tt := range tests {
			for _, host := range []string{"listed.corp.example", "other.corp.example"} {
				name := fmt.Sprintf("%s/%s/%s", edition, tt.addr, host)
				t.Run(name, func(t *testing.T) {
					e := newServerEnv(t)
					e.deps.Rules = netpolicy.NewRules(edition, ph)
					e.deps.Gates.Edition = edition
					e.resolver.Addrs[host] = srvAddrs(tt.addr)
					_, err := registry.NewCreateServerHandler(e.deps).Handle(context.Background(), srvPrincipalA, srvNoneCmd("wiki", "https://"+host+"/mcp"))
					allowed := tt.selfListed && edition == gate.SelfHosted && host == "listed.corp.example"
					if allowed {
						if err != nil {
							t.Fatalf("CreateServer() = %v, want allowed", err)
						}
						return
					}
					srvWantCode(t, err, app.CodeEndpointNotPublic, host, tt.addr)
				})
			}
		}
	}
	// Public addresses pass on both editions, listed or not.
	for _, edition := range []gate.Edition{gate.SelfHosted, gate.Enterprise} {
		e := newServerEnv(t)
		e.deps.Rules = netpolicy.NewRules(edition, ph)
		if _, err := registry.NewCreateServerHandler(e.deps).Handle(context.Background(), srvPrincipalA, srvNoneCmd("wiki", "https://wiki.example.com/")); err != nil {
			t.Errorf("%s: public host = %v", edition, err)
		}
	}
}

func TestGetListServers(t *testing.T) {
	e := newServerEnv(t)
	wiki := e.create(t, srvPrincipalA, srvBearerCmd("wiki", "https://wiki.example.com/mcp"))
	e.create(t, srvPrincipalA, srvNoneCmd("docs", "https://docs.example.com/"))
	other := e.create(t, srvPrincipalB, srvNoneCmd("theirs", "https://docs.example.com/"))

	// Reading is not gated.
	e.deps.Gates = app.Gates{}
	get := registry.NewGetServerHandler(e.deps)
	s, err := get.Handle(context.Background(), srvPrincipalA, registry.GetServer{ID: wiki.ID()})
	if err != nil || s.ID() != wiki.ID() || s.CredentialHint() != "Bearer …wxyz" {
		t.Fatalf("GetServer() = %v, %v", s, err)
	}
	if s, err := get.Handle(context.Background(), srvPrincipalA, registry.GetServer{ID: strings.ToUpper(wiki.ID())}); err != nil || s.ID() != wiki.ID() {
		t.Errorf("GetServer(uppercase id) = %v, %v", s, err)
	}
	for _, id := range []string{other.ID(), "00000000-0000-4000-8000-000000000000", "not-a-uuid", "", "' OR 1=1 --"} {
		_, err := get.Handle(context.Background(), srvPrincipalA, registry.GetServer{ID: id})
		srvWantCode(t, err, app.CodeNotFound)
	}

	list, err := registry.NewListServersHandler(e.deps).Handle(context.Background(), srvPrincipalA, registry.ListServers{})
	if err != nil || len(list) != 2 || list[0].Name().String() != "docs" || list[1].Name().String() != "wiki" {
		t.Errorf("ListServers() = %v, %v", list, err)
	}
	empty, err := registry.NewListServersHandler(e.deps).Handle(context.Background(), ports.Principal{TenantID: "cccccccc-0000-4000-8000-000000000003"}, registry.ListServers{})
	if err != nil || empty == nil || len(empty) != 0 {
		t.Errorf("ListServers(empty tenant) = %#v, %v", empty, err)
	}
}

func TestDeleteServer(t *testing.T) {
	for _, g := range []struct {
		name  string
		gates app.Gates
	}{
		{"open", srvOpenGates},
		{"not signed off", app.Gates{SignedOff: false, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}},
		{"instance disabled", app.Gates{SignedOff: true, Instance: gate.InstanceDisabled, Edition: gate.SelfHosted}},
		{"both closed", app.Gates{}},
	} {
		t.Run(g.name, func(t *testing.T) {
			e := newServerEnv(t)
			s := e.create(t, srvPrincipalA, srvBearerCmd("wiki", "https://wiki.example.com/mcp"))
			other := e.create(t, srvPrincipalB, srvNoneCmd("theirs", "https://docs.example.com/"))
			e.deps.Gates = g.gates
			e.clock.At = srvT0.Add(time.Hour)
			del := registry.NewDeleteServerHandler(e.deps)

			srvWantCode(t, del.Handle(context.Background(), srvPrincipalA, registry.DeleteServer{ID: other.ID()}), app.CodeNotFound)
			srvWantCode(t, del.Handle(context.Background(), srvPrincipalA, registry.DeleteServer{ID: "nope"}), app.CodeNotFound)
			if err := del.Handle(context.Background(), srvPrincipalA, registry.DeleteServer{ID: s.ID()}); err != nil {
				t.Fatalf("DeleteServer() = %v", err)
			}
			if len(e.repos[srvTenantA].Rows) != 0 || len(e.repos[srvTenantA].Creds) != 0 || len(e.repos[srvTenantB].Rows) != 1 {
				t.Errorf("rows after delete: A %d (creds %d), B %d", len(e.repos[srvTenantA].Rows), len(e.repos[srvTenantA].Creds), len(e.repos[srvTenantB].Rows))
			}
			events := e.audit(srvTenantA)
			last := events[len(events)-1]
			if last.Action != "server.delete" || last.Target != s.ID() || last.Actor != "token:tok-a" || !last.At.Equal(e.clock.At) ||
				fmt.Sprint(last.Details) != fmt.Sprint(map[string]any{"name": "wiki"}) {
				t.Errorf("audit = %+v", last)
			}
			srvWantCode(t, del.Handle(context.Background(), srvPrincipalA, registry.DeleteServer{ID: s.ID()}), app.CodeNotFound)
		})
	}
}

func srvPtr[T any](v T) *T { return &v }

func TestPatchServer(t *testing.T) {
	newAuth := &registry.ServerAuth{Type: "bearer", Token: "new-token-abcdefgh9876"}
	tests := []struct {
		name    string
		setup   func(e *serverEnv)
		cred    bool // the server has a bearer credential
		cmd     registry.PatchServer
		code    app.Code
		fields  []string
		changed []string
		check   func(t *testing.T, e *serverEnv, s *server.Server)
	}{
		{name: "not signed off", setup: func(e *serverEnv) { e.deps.Gates.SignedOff = false },
			cmd: registry.PatchServer{Enabled: srvPtr(false)}, code: app.CodeNotSignedOff},
		{name: "instance disabled", setup: func(e *serverEnv) { e.deps.Gates.Instance = gate.InstanceDisabled },
			cmd: registry.PatchServer{Enabled: srvPtr(false)}, code: app.CodeInstanceDisabled},
		{name: "empty patch", cmd: registry.PatchServer{}, code: app.CodeValidationFailed, fields: []string{"body"}},
		{name: "bad name and url", cmd: registry.PatchServer{Name: srvPtr("X"), URL: srvPtr("http://a"), Acknowledged: srvPtr(true)},
			code: app.CodeValidationFailed, fields: []string{"name", "url"}},
		{name: "bad auth", cmd: registry.PatchServer{Auth: &registry.ServerAuth{Type: "header", Name: "host", Value: "v"}},
			code: app.CodeValidationFailed, fields: []string{"auth.name"}},
		{name: "rename", cmd: registry.PatchServer{Name: srvPtr("docs2")}, changed: []string{"name"},
			check: func(t *testing.T, e *serverEnv, s *server.Server) {
				if s.Name().String() != "docs2" || len(s.Tools()) != 2 {
					t.Errorf("name %q tools %d", s.Name(), len(s.Tools()))
				}
			}},
		{name: "rename to taken", setup: func(e *serverEnv) {
			e.create(&testing.T{}, srvPrincipalA, srvNoneCmd("taken", "https://docs.example.com/"))
		},
			cmd: registry.PatchServer{Name: srvPtr("taken")}, code: app.CodeNameTaken},
		{name: "url without ack", cmd: registry.PatchServer{URL: srvPtr("https://wiki.example.com/v2")}, code: app.CodeAcknowledgementRequired},
		{name: "url with ack false", cmd: registry.PatchServer{URL: srvPtr("https://wiki.example.com/v2"), Acknowledged: srvPtr(false)}, code: app.CodeAcknowledgementRequired},
		{name: "url change resets tools", cmd: registry.PatchServer{URL: srvPtr("https://wiki.example.com/v2"), Acknowledged: srvPtr(true)},
			changed: []string{"url", "acknowledged", "tools"},
			check: func(t *testing.T, e *serverEnv, s *server.Server) {
				if len(s.Tools()) != 0 || s.URL().String() != "https://wiki.example.com/v2" || !s.AcknowledgedAt().Equal(e.clock.At) {
					t.Errorf("url %q tools %d ack %v", s.URL(), len(s.Tools()), s.AcknowledgedAt())
				}
			}},
		{name: "host change without auth", cred: true, cmd: registry.PatchServer{URL: srvPtr("https://evil.example/mcp"), Acknowledged: srvPtr(true)},
			code: app.CodeCredentialRequired},
		{name: "host change with auth", cred: true, cmd: registry.PatchServer{URL: srvPtr("https://evil.example/mcp"), Acknowledged: srvPtr(true), Auth: newAuth},
			changed: []string{"url", "auth", "acknowledged", "tools"},
			check: func(t *testing.T, e *serverEnv, s *server.Server) {
				plain, err := e.cipher.Open(e.repos[srvTenantA].Creds[s.ID()], []byte("mcp_servers:"+s.ID()))
				if err != nil || !strings.Contains(string(plain), "new-token-abcdefgh9876") || s.CredentialHint() != "Bearer …9876" {
					t.Errorf("credential %q, %v, hint %q", plain, err, s.CredentialHint())
				}
			}},
		{name: "host change on server without credential", cmd: registry.PatchServer{URL: srvPtr("https://evil.example/mcp"), Acknowledged: srvPtr(true)},
			changed: []string{"url", "acknowledged", "tools"}},
		{name: "port change keeps credential", cred: true, cmd: registry.PatchServer{URL: srvPtr("https://wiki.example.com:8443/mcp"), Acknowledged: srvPtr(true)},
			changed: []string{"url", "acknowledged", "tools"},
			check: func(t *testing.T, e *serverEnv, s *server.Server) {
				if _, ok := e.repos[srvTenantA].Creds[s.ID()]; !ok || !s.HasCredential() {
					t.Errorf("credential dropped")
				}
			}},
		{name: "new url private", cmd: registry.PatchServer{URL: srvPtr("https://intra.example/mcp"), Acknowledged: srvPtr(true)}, code: app.CodeEndpointNotPublic},
		{name: "new url metadata literal", cmd: registry.PatchServer{URL: srvPtr("https://169.254.169.254/"), Acknowledged: srvPtr(true)}, code: app.CodeEndpointNotPublic},
		{name: "new url does not resolve", cmd: registry.PatchServer{URL: srvPtr("https://nx.example/"), Acknowledged: srvPtr(true)}, code: app.CodeEndpointNotPublic},
		{name: "same url needs neither ack nor lookup", setup: func(e *serverEnv) { delete(e.resolver.Addrs, "wiki.example.com") },
			cmd: registry.PatchServer{URL: srvPtr("https://WIKI.example.com:443/mcp"), Name: srvPtr("renamed")}, changed: []string{"name"}},
		{name: "remove credential", cred: true, cmd: registry.PatchServer{Auth: &registry.ServerAuth{Type: "none"}}, changed: []string{"auth"},
			check: func(t *testing.T, e *serverEnv, s *server.Server) {
				if _, ok := e.repos[srvTenantA].Creds[s.ID()]; ok || s.HasCredential() {
					t.Errorf("credential kept")
				}
			}},
		{name: "remove credential without keys", cred: true, setup: func(e *serverEnv) { e.cipher.Keys = nil },
			cmd: registry.PatchServer{Auth: &registry.ServerAuth{Type: "none"}}, changed: []string{"auth"}},
		{name: "new credential without keys", setup: func(e *serverEnv) { e.cipher.Keys = nil },
			cmd: registry.PatchServer{Auth: newAuth}, code: app.CodeKeysUnavailable},
		{name: "disable", cmd: registry.PatchServer{Enabled: srvPtr(false)}, changed: []string{"enabled"}},
		{name: "withdraw ack", cmd: registry.PatchServer{Acknowledged: srvPtr(false)}, changed: []string{"acknowledged"}},
		{name: "no change writes no audit", cmd: registry.PatchServer{Enabled: srvPtr(true)}, changed: nil},
		{name: "unknown id", setup: func(e *serverEnv) {}, cmd: registry.PatchServer{ID: "00000000-0000-4000-8000-000000000000", Enabled: srvPtr(false)}, code: app.CodeNotFound},
		{name: "malformed id", cmd: registry.PatchServer{ID: "x", Enabled: srvPtr(false)}, code: app.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newServerEnv(t)
			cmd := srvNoneCmd("docs", "https://wiki.example.com/mcp")
			if tt.cred {
				cmd = srvBearerCmd("docs", "https://wiki.example.com/mcp")
			}
			s := e.create(t, srvPrincipalA, cmd)
			_, err := e.repos[srvTenantA].Update(context.Background(), s.ID(), func(s *server.Server) (ports.CredentialUpdate, error) {
				return ports.CredentialUpdate{}, s.ReplaceTools(make([]tool.Snapshot, 2), srvT0)
			})
			if err != nil {
				t.Fatal(err)
			}
			storedBefore := string(e.repos[srvTenantA].Creds[s.ID()])
			if tt.setup != nil {
				tt.setup(e)
			}
			e.clock.At = srvT0.Add(time.Hour)
			if tt.cmd.ID == "" {
				tt.cmd.ID = s.ID()
			}
			auditBefore := len(e.audit(srvTenantA))

			got, err := registry.NewPatchServerHandler(e.deps).Handle(context.Background(), srvPrincipalA, tt.cmd)
			if tt.code != "" {
				e2 := srvWantCode(t, err, tt.code, "example", "169.254", "new-token")
				if len(e2.Fields) != len(tt.fields) {
					t.Errorf("fields = %v, want %v", e2.Fields, tt.fields)
				}
				for _, f := range tt.fields {
					if _, ok := e2.Fields[f]; !ok {
						t.Errorf("fields = %v, want %q", e2.Fields, f)
					}
				}
				if stored, ok := e.repos[srvTenantA].Rows[s.ID()]; ok && (stored.Name().String() != "docs" || len(stored.Tools()) != 2 || !stored.UpdatedAt().Equal(srvT0)) {
					t.Errorf("a refused patch changed the row: %+v", stored)
				}
				if string(e.repos[srvTenantA].Creds[s.ID()]) != storedBefore {
					t.Errorf("a refused patch changed the credential")
				}
				if len(e.audit(srvTenantA)) != auditBefore {
					t.Errorf("a refused patch wrote an audit event")
				}
				return
			}
			if err != nil {
				t.Fatalf("PatchServer() = %v", err)
			}
			events := e.audit(srvTenantA)[auditBefore:]
			if tt.changed == nil {
				if len(events) != 0 {
					t.Errorf("audit = %v, want none", events)
				}
			} else {
				if len(events) != 1 || events[0].Action != "server.update" || events[0].Target != s.ID() || !events[0].At.Equal(e.clock.At) ||
					fmt.Sprint(events[0].Details) != fmt.Sprint(map[string]any{"changed": tt.changed}) {
					t.Errorf("audit = %+v, want server.update changed %v", events, tt.changed)
				}
				if out := fmt.Sprintf("%+v", events); strings.Contains(out, "token-abcdefgh") || strings.Contains(out, "https://") {
					t.Errorf("audit holds a secret or URL: %s", out)
				}
			}
			if tt.check != nil {
				tt.check(t, e, got)
			}
		})
	}
}

// TestPatchForeignServer: a patch of another tenant's server is not_found
// and leaves it alone.
func TestPatchForeignServer(t *testing.T) {
	e := newServerEnv(t)
	theirs := e.create(t, srvPrincipalB, srvBearerCmd("theirs", "https://wiki.example.com/"))
	_, err := registry.NewPatchServerHandler(e.deps).Handle(context.Background(), srvPrincipalA,
		registry.PatchServer{ID: theirs.ID(), URL: srvPtr("https://evil.example/"), Acknowledged: srvPtr(true), Auth: &registry.ServerAuth{Type: "none"}})
	srvWantCode(t, err, app.CodeNotFound)
	if s := e.repos[srvTenantB].Rows[theirs.ID()]; s.URL().String() != "https://wiki.example.com/" || !s.HasCredential() {
		t.Errorf("foreign server changed: %+v", s)
	}
}

// TestEndpointRefusalsLookAlike: a refused host answers the same whether
// it resolves to a private, a never-allowed or no address, so an admin
// cannot map the instance's internal DNS through the API.
func TestEndpointRefusalsLookAlike(t *testing.T) {
	e := newServerEnv(t)
	h := registry.NewCreateServerHandler(e.deps)
	var messages []string
	for i, host := range []string{"intra.example", "mixed.example", "empty.example", "unknown.example"} {
		_, err := h.Handle(context.Background(), srvPrincipalA, srvNoneCmd(fmt.Sprintf("s%d", i), "https://"+host+"/mcp"))
		ae := srvWantCode(t, err, app.CodeEndpointNotPublic, host)
		messages = append(messages, ae.Message)
	}
	for _, m := range messages[1:] {
		if m != messages[0] {
			t.Errorf("refusal messages differ: %q", messages)
			break
		}
	}
}
