package accounts_test

import (
	"context"
	"crypto/rand"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

var tokT0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// tokenDeps are the deps of the token use cases on store, with an audit
// log per tenant and a fixed clock.
func tokenDeps(store *portfake.Accounts, r io.Reader) accounts.Deps {
	tenants := &portfake.Tenants{NewTx: func(string) *portfake.Tx { return &portfake.Tx{} }}
	clock := &portfake.Clock{At: tokT0}
	store.Now = clock.Now
	return accounts.Deps{Accounts: store, Tenants: tenants, Clock: clock, Rand: r}
}

func auditOf(d accounts.Deps, tenant string) []ports.AuditEvent {
	var out []ports.AuditEvent
	_ = d.Tenants.InTenant(context.Background(), tenant, func(_ context.Context, tx ports.TenantTx) error {
		out = append(out, tx.Audit().(*portfake.Audit).Events...)
		return nil
	})
	return out
}

func TestTokenLifecycle(t *testing.T) {
	ctx := context.Background()
	store := portfake.NewAccounts()
	d := tokenDeps(store, rand.Reader)
	tenant, _ := accounts.NewCreateTenantHandler(d).Handle(ctx, accounts.CreateTenant{Name: "acme"})
	other, _ := accounts.NewCreateTenantHandler(d).Handle(ctx, accounts.CreateTenant{Name: "other"})
	create := accounts.NewCreateTokenHandler(d)

	tok, err := create.Issue(ctx, accounts.CreateToken{TenantID: tenant, Permissions: []string{"repo:manage"}, Label: "ci nightly", ExpiresIn: 90 * 24 * time.Hour, Actor: "token:t1"})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Info.Label != "ci nightly" || !tok.Info.ExpiresAt.Equal(tokT0.Add(90*24*time.Hour)) || tok.Info.TenantID != tenant {
		t.Errorf("issued %+v", tok.Info)
	}
	ev := auditOf(d, tenant)
	if len(ev) != 1 || ev[0].Action != accounts.ActionTokenCreate || ev[0].Actor != "token:t1" || ev[0].Target != tok.Info.ID ||
		ev[0].Details["label"] != "ci nightly" || ev[0].Details["expiresAt"] != "2027-03-01T12:00:00Z" {
		t.Errorf("audit %+v", ev)
	}
	if strings.Contains(strings.ToLower(strings.Join([]string{ev[0].Actor, ev[0].Target}, " ")), tok.Token) {
		t.Errorf("the audit holds the token")
	}

	// Listed without the secret; another tenant sees nothing of it.
	list, err := accounts.NewListTokensHandler(d).Handle(ctx, accounts.ListTokens{TenantID: tenant})
	if err != nil || len(list) != 1 || list[0].ID != tok.Info.ID {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if l, _ := accounts.NewListTokensHandler(d).Handle(ctx, accounts.ListTokens{TenantID: other}); len(l) != 0 {
		t.Errorf("another tenant lists %+v", l)
	}

	// Works until it expires, then fails at once.
	auth := accounts.NewAuthenticateHandler(d)
	if _, err := auth.Handle(ctx, accounts.Authenticate{Token: tok.Token, Client: "192.0.2.1"}); err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	d.Clock.(*portfake.Clock).At = tokT0.Add(90 * 24 * time.Hour)
	if _, err := auth.Handle(ctx, accounts.Authenticate{Token: tok.Token, Client: "192.0.2.1"}); err == nil {
		t.Fatalf("an expired token authenticates")
	}

	// Revoke: another tenant's admin gets not_found and changes nothing;
	// the owner's revoke is audited and the token fails at once.
	never, err := create.Issue(ctx, accounts.CreateToken{TenantID: tenant, Permissions: []string{"tenant:manage"}, Actor: "token:t1"})
	if err != nil {
		t.Fatal(err)
	}
	revoke := accounts.NewRevokeTokenHandler(d)
	if _, err := revoke.Handle(ctx, accounts.RevokeToken{TenantID: other, ID: never.Info.ID, Actor: "token:x"}); restCode(err) != app.CodeNotFound {
		t.Fatalf("revoke from another tenant = %v", err)
	}
	if _, err := auth.Handle(ctx, accounts.Authenticate{Token: never.Token}); err != nil {
		t.Fatalf("a token revoked by another tenant stopped working: %v", err)
	}
	if _, err := revoke.Handle(ctx, accounts.RevokeToken{TenantID: tenant, ID: never.Info.ID, Actor: "token:t1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Handle(ctx, accounts.Authenticate{Token: never.Token}); err == nil {
		t.Fatalf("a revoked token authenticates")
	}
	ev = auditOf(d, tenant)
	if last := ev[len(ev)-1]; last.Action != accounts.ActionTokenRevoke || last.Target != never.Info.ID || last.Actor != "token:t1" {
		t.Errorf("audit %+v", last)
	}
	if n := len(auditOf(d, other)); n != 0 {
		t.Errorf("the other tenant's audit has %d events", n)
	}
	// The operator's revoke (no tenant) works on any tenant's token.
	if info, err := revoke.Handle(ctx, accounts.RevokeToken{ID: tok.Info.ID}); err != nil || info.TenantID != tenant {
		t.Fatalf("operator revoke = %+v, %v", info, err)
	}
	if last := auditOf(d, tenant); last[len(last)-1].Actor != accounts.OperatorActor {
		t.Errorf("operator revoke audited as %+v", last[len(last)-1])
	}
	for _, bad := range []string{"nope", "", tok.Info.ID} {
		if _, err := revoke.Handle(ctx, accounts.RevokeToken{ID: bad}); restCode(err) != app.CodeNotFound {
			t.Errorf("revoke %q = %v, want not_found", bad, err)
		}
	}
}

func TestCreateTokenRefusals(t *testing.T) {
	ctx := context.Background()
	store := portfake.NewAccounts()
	d := tokenDeps(store, rand.Reader)
	tenant, _ := accounts.NewCreateTenantHandler(d).Handle(ctx, accounts.CreateTenant{Name: "acme"})
	tests := []struct {
		name  string
		cmd   accounts.CreateToken
		field string
	}{
		{"label too long", accounts.CreateToken{Label: strings.Repeat("é", 101)}, "label"},
		{"label with NUL", accounts.CreateToken{Label: "a\x00b"}, "label"},
		{"label with a line break", accounts.CreateToken{Label: "a\nb"}, "label"},
		{"label not UTF-8", accounts.CreateToken{Label: "a\xffb"}, "label"},
		{"expiry too short", accounts.CreateToken{ExpiresIn: 59 * time.Second}, "expiresIn"},
		{"expiry too long", accounts.CreateToken{ExpiresIn: 3651 * 24 * time.Hour}, "expiresIn"},
		{"negative expiry", accounts.CreateToken{ExpiresIn: -time.Hour}, "expiresIn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cmd.TenantID, tt.cmd.Permissions = tenant, []string{"repo:manage"}
			_, err := accounts.NewCreateTokenHandler(d).Issue(ctx, tt.cmd)
			if e := app.AsError(err); err == nil || e.Code != app.CodeValidationFailed || e.Fields[tt.field] == "" {
				t.Fatalf("err = %v, want validation_failed on %s", err, tt.field)
			}
			if l, _ := store.ListTokens(ctx, tenant); len(l) != 0 {
				t.Errorf("a refused token was stored")
			}
		})
	}
	// The edges are accepted.
	for _, ok := range []accounts.CreateToken{{Label: strings.Repeat("é", 100), ExpiresIn: time.Minute}, {ExpiresIn: 3650 * 24 * time.Hour}} {
		ok.TenantID, ok.Permissions = tenant, []string{"repo:manage"}
		if _, err := accounts.NewCreateTokenHandler(d).Issue(ctx, ok); err != nil {
			t.Errorf("Issue(%d-char label, %s) = %v", len([]rune(ok.Label)), ok.ExpiresIn, err)
		}
	}
}

func TestParseLifetime(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "90d": 90 * 24 * time.Hour, "720h": 720 * time.Hour, "30m": 30 * time.Minute, "1h30m": 90 * time.Minute} {
		if got, err := accounts.ParseLifetime(in); err != nil || got != want {
			t.Errorf("ParseLifetime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"d", "0d", "00d", "0h", "0m", "-1d", "1.5d", "90 d", "-1h", "0s", "forever", "999999d", "1w"} {
		if _, err := accounts.ParseLifetime(bad); restCode(err) != app.CodeValidationFailed {
			t.Errorf("ParseLifetime(%q) = %v, want validation_failed", bad, err)
		}
	}
}

// TestAuthLimiter: failed authentications past the limit answer
// rate_limited with the time to wait, per client address (an IPv6 /64)
// and per token prefix; a correct token is never refused because of
// failures (its own client's included), a success resets nothing, and
// the window ends.
func TestAuthLimiter(t *testing.T) {
	ctx := context.Background()
	store := portfake.NewAccounts()
	d := tokenDeps(store, rand.Reader)
	clock := d.Clock.(*portfake.Clock)
	d.Limiter = accounts.NewAuthLimiter(clock)
	tenant, _ := accounts.NewCreateTenantHandler(d).Handle(ctx, accounts.CreateTenant{Name: "acme"})
	good, err := accounts.NewCreateTokenHandler(d).Handle(ctx, accounts.CreateToken{TenantID: tenant, Permissions: []string{"repo:manage"}})
	if err != nil {
		t.Fatal(err)
	}
	auth := accounts.NewAuthenticateHandler(d)
	try := func(client, token string) error {
		_, err := auth.Handle(ctx, accounts.Authenticate{Token: token, Client: client})
		return err
	}

	t.Run("per client address", func(t *testing.T) {
		d.Limiter = accounts.NewAuthLimiter(clock)
		auth = accounts.NewAuthenticateHandler(d)
		for i := range accounts.MaxAuthFailuresPerClient {
			if err := try("198.51.100.7", "junk-"+string(rune('a'+i%26))); restCode(err) == app.CodeRateLimited {
				t.Fatalf("attempt %d already limited", i+1)
			}
		}
		wrong := good[:len(good)-1] + "x"
		if good[len(good)-1] == 'x' {
			wrong = good[:len(good)-1] + "y"
		}
		for _, bad := range []string{wrong, "junk"} {
			err := try("198.51.100.7", bad)
			if e := app.AsError(err); e.Code != app.CodeRateLimited || e.RetryAfter <= 0 || e.RetryAfter > accounts.AuthFailureWindow {
				t.Fatalf("past the limit, a wrong token %q from that client = %v (retry after %v), want rate_limited", bad, err, e.RetryAfter)
			}
		}
		// A correct token is never refused because of failures, its
		// own client's included; and a success resets nothing.
		if err := try("198.51.100.7", good); err != nil {
			t.Fatalf("past the limit, the correct token from that client = %v, want accepted", err)
		}
		if err := try("198.51.100.7", wrong); restCode(err) != app.CodeRateLimited {
			t.Errorf("a wrong token after a success from the limited client = %v, want still rate_limited", err)
		}
		if err := try("198.51.100.8", good); err != nil {
			t.Errorf("another client with the correct token = %v", err)
		}
		if err := try("198.51.100.8", wrong); err == nil || restCode(err) == app.CodeRateLimited {
			t.Errorf("another client's wrong token = %v, want unauthenticated (not limited)", err)
		}
		clock.At = clock.At.Add(accounts.AuthFailureWindow)
		if err := try("198.51.100.7", wrong); restCode(err) == app.CodeRateLimited {
			t.Errorf("after the window a wrong token = %v, want no longer limited", err)
		}
	})

	t.Run("an IPv6 client by its /64", func(t *testing.T) {
		d.Limiter = accounts.NewAuthLimiter(clock)
		auth = accounts.NewAuthenticateHandler(d)
		for i := range accounts.MaxAuthFailuresPerClient {
			_ = try("2001:db8:1:2::"+string(rune('a'+i%6)), "junk")
		}
		if err := try("2001:db8:1:2:ffff::1", "junk"); restCode(err) != app.CodeRateLimited {
			t.Errorf("another address of the same /64 = %v, want rate_limited", err)
		}
		if err := try("2001:db8:1:2:ffff::1", good); err != nil {
			t.Errorf("the correct token from the limited /64 = %v, want accepted", err)
		}
		if err := try("2001:db8:1:3::1", "junk"); restCode(err) == app.CodeRateLimited {
			t.Errorf("another /64 = %v, want not limited", err)
		}
	})

	t.Run("per token prefix", func(t *testing.T) {
		d.Limiter = accounts.NewAuthLimiter(clock)
		auth = accounts.NewAuthenticateHandler(d)
		prefix := good[:accounts.TokenPrefixLen]
		guess := func(i int) string {
			return prefix + strings.Repeat("q", len(good)-accounts.TokenPrefixLen-1) + string(rune('a'+i))
		}
		// Guesses at one prefix from many addresses, each under its own limit.
		for i := range accounts.MaxAuthFailuresPerPrefix {
			if err := try("203.0.113."+string(rune('1'+i%9)), guess(i)); restCode(err) == app.CodeRateLimited {
				t.Fatalf("guess %d already limited", i+1)
			}
		}
		if err := try("203.0.113.1", guess(20)); restCode(err) != app.CodeRateLimited {
			t.Errorf("a further guess at the prefix from a failing client = %v, want rate_limited", err)
		}
		// The owner gets in, from an address without failures or from
		// one of the failing ones.
		if err := try("192.0.2.50", good); err != nil {
			t.Errorf("the correct token from a clean client = %v", err)
		}
		if err := try("203.0.113.1", good); err != nil {
			t.Errorf("the correct token from a client that failed at its prefix = %v", err)
		}
	})
}
