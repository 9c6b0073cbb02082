package accounts_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

// restCode is the contract code of err ("" for nil).
func restCode(err error) app.Code {
	if err == nil {
		return ""
	}
	return app.AsError(err).Code
}

func TestParsePermissions(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
		bad  string // a substring of the error message
	}{
		{name: "tenant", in: []string{"tenant:manage"}, want: []string{"tenant:manage"}},
		{name: "both", in: []string{"repo:manage", "tenant:manage"}, want: []string{"repo:manage", "tenant:manage"}},
		{name: "admin", in: []string{"admin"}, bad: `"admin"`},
		{name: "duplicate", in: strings.Split("tenant:manage,tenant:manage", ","), bad: `duplicate permission "tenant:manage"`},
		{name: "empty list", in: nil, bad: "at least one"},
		{name: "empty string", in: strings.Split("", ","), bad: `""`},
		{name: "trailing comma", in: strings.Split("repo:manage,", ","), bad: `""`},
		{name: "case", in: []string{"Tenant:Manage"}, bad: `"Tenant:Manage"`},
		{name: "space", in: []string{" repo:manage"}, bad: `" repo:manage"`},
		{name: "wildcard", in: []string{"*"}, bad: `"*"`},
		{name: "newline", in: []string{"repo:manage\nadmin"}, bad: `"repo:manage\nadmin"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := accounts.ParsePermissions(tt.in)
			if tt.bad != "" {
				if restCode(err) != app.CodeValidationFailed || !strings.Contains(err.Error(), tt.bad) {
					t.Fatalf("ParsePermissions(%q) error = %v, want validation_failed naming %s", tt.in, err, tt.bad)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q spans lines", err)
				}
				return
			}
			if err != nil || strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("ParsePermissions(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestCreateTokenStoresOnlyTheHash(t *testing.T) {
	ctx := context.Background()
	store := portfake.NewAccounts()
	d := tokenDeps(store, rand.Reader)
	tenant, err := accounts.NewCreateTenantHandler(d).Handle(ctx, accounts.CreateTenant{Name: "Acme GmbH"})
	if err != nil {
		t.Fatal(err)
	}
	token, err := accounts.NewCreateTokenHandler(d).Handle(ctx, accounts.CreateToken{TenantID: tenant, Permissions: []string{"repo:manage"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(token, accounts.TokenPrefix) {
		t.Fatalf("token %q lacks the prefix %q", token, accounts.TokenPrefix)
	}
	secret, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(token, accounts.TokenPrefix))
	if err != nil || len(secret) != 32 {
		t.Fatalf("token secret: %d bytes, %v; want 32 bytes of base64url", len(secret), err)
	}
	if len(store.Hashes) != 1 {
		t.Fatalf("store got %d hashes, want 1", len(store.Hashes))
	}
	want := sha256.Sum256([]byte(token))
	got := store.Hashes[0]
	if !bytes.Equal(got, want[:]) {
		t.Errorf("stored %x, want the SHA-256 %x", got, want)
	}
	if bytes.Contains(got, []byte(token)) || bytes.Contains(got, secret) {
		t.Error("the store received the plaintext token")
	}

	other, err := accounts.NewCreateTokenHandler(d).Handle(ctx, accounts.CreateToken{TenantID: tenant, Permissions: []string{"repo:manage"}})
	if err != nil || other == token {
		t.Fatalf("second token = %q, %v; want a different token", other, err)
	}

	p, err := accounts.NewAuthenticateHandler(accounts.Deps{Accounts: store}).Handle(ctx, accounts.Authenticate{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if p.TenantID != tenant || strings.Join(p.Permissions, ",") != "repo:manage" {
		t.Errorf("Authenticate = %+v, want tenant %s with repo:manage", p, tenant)
	}
}

func TestCreateTokenRefuses(t *testing.T) {
	ctx := context.Background()
	store := portfake.NewAccounts()
	d := tokenDeps(store, rand.Reader)
	tenant, _ := accounts.NewCreateTenantHandler(d).Handle(ctx, accounts.CreateTenant{Name: "Acme"})
	tests := []struct {
		name   string
		tenant string
		perms  []string
		want   app.Code
	}{
		{name: "admin", tenant: tenant, perms: []string{"admin"}, want: app.CodeValidationFailed},
		{name: "duplicate", tenant: tenant, perms: []string{"tenant:manage", "tenant:manage"}, want: app.CodeValidationFailed},
		{name: "none", tenant: tenant, want: app.CodeValidationFailed},
		{name: "malformed tenant", tenant: "1; DROP TABLE", perms: []string{"repo:manage"}, want: app.CodeValidationFailed},
		{name: "unknown tenant", tenant: portfake.UUID(999), perms: []string{"repo:manage"}, want: app.CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			token, err := accounts.NewCreateTokenHandler(d).Handle(ctx, accounts.CreateToken{TenantID: tt.tenant, Permissions: tt.perms})
			if restCode(err) != tt.want || token != "" {
				t.Fatalf("CreateToken = %q, %v; want %s", token, err, tt.want)
			}
		})
	}
	if len(store.Hashes) != 0 {
		t.Errorf("refused tokens reached the store: %d", len(store.Hashes))
	}
}

func TestCreateTenantName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"Acme", true},
		{"Ärzte & Söhne", true},
		{strings.Repeat("x", 200), true},
		{strings.Repeat("ß", 200), true},
		{strings.Repeat("x", 201), false},
		{"", false},
		{"   ", false},
		{"line\nbreak", false},
		{"nul\x00", false},
		{"bad\xffutf8", false},
	}
	for _, tt := range tests {
		_, err := accounts.NewCreateTenantHandler(accounts.Deps{Accounts: portfake.NewAccounts(), Rand: rand.Reader}).Handle(context.Background(), accounts.CreateTenant{Name: tt.name})
		if (err == nil) != tt.ok {
			t.Errorf("CreateTenant(%q) error = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && restCode(err) != app.CodeValidationFailed {
			t.Errorf("CreateTenant(%q) code = %s, want validation_failed", tt.name, restCode(err))
		}
	}
}

func TestAuthenticateRefusesUnknownAndMalformed(t *testing.T) {
	store := portfake.NewAccounts()
	auth := accounts.NewAuthenticateHandler(accounts.Deps{Accounts: store})
	unknown := accounts.TokenPrefix + strings.Repeat("A", 43)
	for _, token := range []string{"", "clt_", "secret", unknown, unknown + "A", strings.Repeat("x", 47)} {
		if _, err := auth.Handle(context.Background(), accounts.Authenticate{Token: token}); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("Authenticate(%q) error = %v, want ErrNotFound", token, err)
		}
	}
}

// failingRand is a source of randomness that fails.
type failingRand struct{}

func (failingRand) Read([]byte) (int, error) { return 0, errors.New("no entropy") }

func TestCreateTokenWithoutRandomnessStoresNothing(t *testing.T) {
	ctx := context.Background()
	store := portfake.NewAccounts()
	tenant, err := accounts.NewCreateTenantHandler(tokenDeps(store, rand.Reader)).Handle(ctx, accounts.CreateTenant{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	token, err := accounts.NewCreateTokenHandler(tokenDeps(store, failingRand{})).Handle(ctx, accounts.CreateToken{TenantID: tenant, Permissions: []string{"repo:manage"}})
	if err == nil || token != "" || len(store.Hashes) != 0 {
		t.Errorf("CreateToken with a failing source = %q, %v, %d hashes stored; want an error and nothing stored", token, err, len(store.Hashes))
	}
}
