package server_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
)

const (
	serverID = "0b6e6f6a-8f3c-4a47-9d0e-2f5c1d7a9b10"
	tenantID = "5f1c2d3e-4a5b-4c6d-8e7f-901a2b3c4d5e"
)

var (
	t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

func mustName(t *testing.T, s string) server.Name {
	t.Helper()
	n, err := server.ParseName(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func mustURL(t *testing.T, s string) server.URL {
	t.Helper()
	u, err := server.ParseURL(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func mustBearer(t *testing.T, s string) server.Credential {
	t.Helper()
	c, err := server.NewBearer(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewServer(t *testing.T) {
	name := mustName(t, "wiki")
	u := mustURL(t, "https://wiki.example.com/mcp")
	cred := mustBearer(t, "token-abcdefghwxyz")
	tests := []struct {
		name       string
		id, tenant string
		srvName    server.Name
		url        server.URL
		cred       server.Credential
		ack        bool
		wantErr    error
		wantField  string
	}{
		{name: "ok", id: serverID, tenant: tenantID, srvName: name, url: u, cred: cred, ack: true},
		{name: "no credential", id: serverID, tenant: tenantID, srvName: name, url: u, cred: server.NoCredential(), ack: true},
		{name: "not acknowledged", id: serverID, tenant: tenantID, srvName: name, url: u, cred: cred, wantErr: server.ErrAcknowledgementRequired},
		{name: "bad id", id: "not-a-uuid", tenant: tenantID, srvName: name, url: u, cred: cred, ack: true, wantField: "id"},
		{name: "uppercase id", id: "0B6E6F6A-8F3C-4A47-9D0E-2F5C1D7A9B10", tenant: tenantID, srvName: name, url: u, cred: cred, ack: true, wantField: "id"},
		{name: "id without dashes", id: "0b6e6f6a08f3c04a4709d0e02f5c1d7a9b10", tenant: tenantID, srvName: name, url: u, cred: cred, ack: true, wantField: "id"},
		{name: "bad tenant", id: serverID, tenant: "", srvName: name, url: u, cred: cred, ack: true, wantField: "tenantId"},
		{name: "zero name", id: serverID, tenant: tenantID, url: u, cred: cred, ack: true, wantField: "name"},
		{name: "zero url", id: serverID, tenant: tenantID, srvName: name, cred: cred, ack: true, wantField: "url"},
		{name: "zero credential", id: serverID, tenant: tenantID, srvName: name, url: u, ack: true, wantField: "auth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := server.NewServer(tt.id, tt.tenant, tt.srvName, tt.url, tt.cred, tt.ack, t0)
			if tt.wantField != "" {
				var fe *field.Error
				if !errors.As(err, &fe) || fe.Field != tt.wantField {
					t.Fatalf("NewServer() = %v, want %s field error", err, tt.wantField)
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("NewServer() = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if s.ID() != tt.id || s.TenantID() != tt.tenant || s.Name() != tt.srvName || s.URL() != tt.url ||
				!s.Enabled() || s.CredentialKind() != tt.cred.Kind() || s.CredentialHint() != tt.cred.Hint() ||
				s.HasCredential() != (tt.cred.Kind() != server.KindNone) || !s.AcknowledgedAt().Equal(t0) || !s.Acknowledged() ||
				!s.LastDiscoveryAt().IsZero() || s.LastError() != "" || len(s.Tools()) != 0 || s.Tools() == nil ||
				!s.CreatedAt().Equal(t0) || !s.UpdatedAt().Equal(t0) {
				t.Errorf("NewServer() = %+v", s)
			}
		})
	}
}

func newServer(t *testing.T, cred server.Credential, tools int) *server.Server {
	t.Helper()
	s, err := server.NewServer(serverID, tenantID, mustName(t, "wiki"), mustURL(t, "https://wiki.example.com/mcp"), cred, true, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceTools(make([]tool.Snapshot, tools), t0); err != nil {
		t.Fatal(err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func TestApply(t *testing.T) {
	cred := mustBearer(t, "token-abcdefghwxyz")
	newCred := mustBearer(t, "token-abcdefgh1234")
	samePath := mustURL(t, "https://wiki.example.com/mcp")
	newPath := mustURL(t, "https://wiki.example.com/v2/mcp")
	newPort := mustURL(t, "https://wiki.example.com:8443/mcp")
	newHost := mustURL(t, "https://evil.example/mcp")
	tests := []struct {
		name      string
		cred      server.Credential
		patch     server.Patch
		wantErr   error
		wantField string
		changed   []string
		check     func(t *testing.T, s *server.Server)
	}{
		{name: "empty patch", cred: cred, patch: server.Patch{}, changed: nil},
		{name: "rename", cred: cred, patch: server.Patch{Name: ptr(mustName(t, "docs"))}, changed: []string{"name"},
			check: func(t *testing.T, s *server.Server) {
				if s.Name().String() != "docs" || len(s.Tools()) != 2 {
					t.Errorf("name %q tools %d", s.Name(), len(s.Tools()))
				}
			}},
		{name: "same name", cred: cred, patch: server.Patch{Name: ptr(mustName(t, "wiki"))}, changed: nil},
		{name: "zero name", cred: cred, patch: server.Patch{Name: &server.Name{}}, wantField: "name"},
		{name: "zero url", cred: cred, patch: server.Patch{URL: &server.URL{}, Acknowledged: ptr(true)}, wantField: "url"},
		{name: "zero credential", cred: cred, patch: server.Patch{Credential: &server.Credential{}}, wantField: "auth"},
		{name: "url without ack", cred: cred, patch: server.Patch{URL: &newPath}, wantErr: server.ErrAcknowledgementRequired},
		{name: "url with ack false", cred: cred, patch: server.Patch{URL: &newPath, Acknowledged: ptr(false)}, wantErr: server.ErrAcknowledgementRequired},
		{name: "same url needs no ack", cred: cred, patch: server.Patch{URL: &samePath}, changed: nil},
		{name: "path change keeps credential", cred: cred, patch: server.Patch{URL: &newPath, Acknowledged: ptr(true)},
			changed: []string{"url", "acknowledged", "tools"},
			check: func(t *testing.T, s *server.Server) {
				if s.URL() != newPath || len(s.Tools()) != 0 || !s.AcknowledgedAt().Equal(t1) || !s.HasCredential() || !s.UpdatedAt().Equal(t1) {
					t.Errorf("url %q tools %d ack %v cred %v", s.URL(), len(s.Tools()), s.AcknowledgedAt(), s.HasCredential())
				}
			}},
		{name: "port change keeps credential", cred: cred, patch: server.Patch{URL: &newPort, Acknowledged: ptr(true)},
			changed: []string{"url", "acknowledged", "tools"}},
		{name: "host change needs credential", cred: cred, patch: server.Patch{URL: &newHost, Acknowledged: ptr(true)}, wantErr: server.ErrCredentialRequired},
		{name: "host change with credential", cred: cred, patch: server.Patch{URL: &newHost, Acknowledged: ptr(true), Credential: &newCred},
			changed: []string{"url", "auth", "acknowledged", "tools"},
			check: func(t *testing.T, s *server.Server) {
				if s.CredentialHint() != "Bearer …1234" || s.URL() != newHost {
					t.Errorf("hint %q url %q", s.CredentialHint(), s.URL())
				}
			}},
		{name: "host change removing credential", cred: cred, patch: server.Patch{URL: &newHost, Acknowledged: ptr(true), Credential: ptr(server.NoCredential())},
			changed: []string{"url", "auth", "acknowledged", "tools"},
			check: func(t *testing.T, s *server.Server) {
				if s.HasCredential() || s.CredentialHint() != "" {
					t.Errorf("credential kept: %v %q", s.CredentialKind(), s.CredentialHint())
				}
			}},
		{name: "host change without credential", cred: server.NoCredential(), patch: server.Patch{URL: &newHost, Acknowledged: ptr(true)},
			changed: []string{"url", "acknowledged", "tools"}},
		{name: "credential only", cred: cred, patch: server.Patch{Credential: &newCred}, changed: []string{"auth"}},
		{name: "ack again keeps time", cred: cred, patch: server.Patch{Acknowledged: ptr(true)}, changed: nil,
			check: func(t *testing.T, s *server.Server) {
				if !s.AcknowledgedAt().Equal(t0) {
					t.Errorf("ack time %v", s.AcknowledgedAt())
				}
			}},
		{name: "withdraw ack", cred: cred, patch: server.Patch{Acknowledged: ptr(false)}, changed: []string{"acknowledged"},
			check: func(t *testing.T, s *server.Server) {
				if s.Acknowledged() || !s.AcknowledgedAt().IsZero() {
					t.Errorf("still acknowledged at %v", s.AcknowledgedAt())
				}
				if _, err := s.Apply(server.Patch{Acknowledged: ptr(true)}, t1.Add(time.Hour)); err != nil || !s.AcknowledgedAt().Equal(t1.Add(time.Hour)) {
					t.Errorf("re-acknowledge: %v at %v", err, s.AcknowledgedAt())
				}
			}},
		{name: "disable", cred: cred, patch: server.Patch{Enabled: ptr(false)}, changed: []string{"enabled"},
			check: func(t *testing.T, s *server.Server) {
				if s.Enabled() {
					t.Errorf("still enabled")
				}
			}},
		{name: "enable enabled", cred: cred, patch: server.Patch{Enabled: ptr(true)}, changed: nil},
		{name: "failed patch changes nothing", cred: cred, patch: server.Patch{Name: ptr(mustName(t, "docs")), URL: &newHost, Acknowledged: ptr(true)}, wantErr: server.ErrCredentialRequired,
			check: func(t *testing.T, s *server.Server) {
				if s.Name().String() != "wiki" || len(s.Tools()) != 2 || !s.UpdatedAt().Equal(t0) {
					t.Errorf("partially applied: %q tools %d", s.Name(), len(s.Tools()))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.cred, 2)
			changed, err := s.Apply(tt.patch, t1)
			if tt.wantField != "" {
				var fe *field.Error
				if !errors.As(err, &fe) || fe.Field != tt.wantField {
					t.Fatalf("Apply() = %v, want %s field error", err, tt.wantField)
				}
			} else if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Apply() = %v, want %v", err, tt.wantErr)
			}
			if !slices.Equal(changed, tt.changed) {
				t.Errorf("Apply() changed %v, want %v", changed, tt.changed)
			}
			if err == nil && len(tt.changed) == 0 && !s.UpdatedAt().Equal(t0) {
				t.Errorf("Apply() without changes moved updatedAt to %v", s.UpdatedAt())
			}
			if err == nil && len(tt.changed) > 0 && !s.UpdatedAt().Equal(t1) {
				t.Errorf("Apply() updatedAt = %v, want %v", s.UpdatedAt(), t1)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

func TestToolsAndDiscovery(t *testing.T) {
	s := newServer(t, server.NoCredential(), 0)
	if err := s.ReplaceTools(make([]tool.Snapshot, limits.MaxToolsPerServer+1), t1); !errors.Is(err, server.ErrTooManyTools) {
		t.Errorf("ReplaceTools(%d) = %v, want %v", limits.MaxToolsPerServer+1, err, server.ErrTooManyTools)
	}
	in := make([]tool.Snapshot, limits.MaxToolsPerServer)
	if err := s.ReplaceTools(in, t1); err != nil || len(s.Tools()) != limits.MaxToolsPerServer || !s.UpdatedAt().Equal(t1) {
		t.Errorf("ReplaceTools(%d) = %v, tools %d", len(in), err, len(s.Tools()))
	}
	in = in[:0]
	if len(s.Tools()) != limits.MaxToolsPerServer {
		t.Errorf("Tools() aliases the caller's slice")
	}
	got := s.Tools()
	_ = append(got[:0], tool.Snapshot{})
	s.RecordDiscovery(t1, "timeout")
	if !s.LastDiscoveryAt().Equal(t1) || s.LastError() != "timeout" {
		t.Errorf("RecordDiscovery: %v %q", s.LastDiscoveryAt(), s.LastError())
	}
	s.RecordError("tool_changed")
	if s.LastError() != "tool_changed" {
		t.Errorf("RecordError: %q", s.LastError())
	}
}

func TestUnmarshalServerFromDatabase(t *testing.T) {
	tools := make([]tool.Snapshot, 3)
	s, err := server.UnmarshalServerFromDatabase(serverID, tenantID, "wiki", "https://wiki.example.com/mcp", false,
		"bearer", "Bearer …wxyz", server.OAuthView{}, time.Time{}, t1, "timeout", 0, tools, t0, t1)
	if err != nil {
		t.Fatalf("UnmarshalServerFromDatabase() = %v", err)
	}
	if s.Name().String() != "wiki" || s.URL().String() != "https://wiki.example.com/mcp" || s.Enabled() || !s.HasCredential() ||
		s.CredentialHint() != "Bearer …wxyz" || s.Acknowledged() || !s.LastDiscoveryAt().Equal(t1) || s.LastError() != "timeout" ||
		len(s.Tools()) != 3 || !s.CreatedAt().Equal(t0) || !s.UpdatedAt().Equal(t1) {
		t.Errorf("UnmarshalServerFromDatabase() = %+v", s)
	}
	tests := []struct {
		name, url, kind string
	}{
		{"tampered url", "http://169.254.169.254/", "none"},
		{"url with user info", "https://a:b@example.com/", "none"},
		{"unknown kind", "https://example.com/", "oauth"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := server.UnmarshalServerFromDatabase(serverID, tenantID, "wiki", tt.url, true, tt.kind, "", server.OAuthView{}, t0, time.Time{}, "", 0, nil, t0, t0); err == nil {
				t.Errorf("UnmarshalServerFromDatabase(%q, %q) = nil error", tt.url, tt.kind)
			}
		})
	}
}
