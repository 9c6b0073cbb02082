// Package porttest holds the contract tests of the store ports: one suite
// per port, run against every implementation of it (the PostgreSQL
// adapter and the in-memory fakes of the use-case tests), so that a fake
// cannot drift from the real store unnoticed. Each suite states the
// port's semantics as tests: ordering, paging, not-found errors, tenant
// scoping, idempotency and aggregations, with the edge cases.
//
// A suite is a function such as [ServerRepo] that takes an open function;
// the suite calls it for a [Harness] in each subtest (or once for subtests
// that share rows). Subtests create the tenants they use, so one database
// may serve every subtest, and a check across tenants looks at its own
// rows only.
package porttest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// Harness is one implementation of the store ports. Tenants are created
// with Accounts.CreateTenant and then used through Tenants. A suite uses
// only the fields it needs: its doc comment names them.
type Harness struct {
	Tenants     ports.Tenants
	Accounts    ports.Accounts
	Credentials ports.CredentialRotator
	PromptLogs  ports.PromptLogRotator
	Sessions    ports.WebSessions
}

// Open returns the harness of one subtest.
type Open func(t *testing.T) Harness

// T0 is the time the suites build their entities at: microsecond
// precision, as a timestamptz column keeps.
var T0 = time.Date(2026, 11, 30, 9, 0, 0, 123456000, time.UTC)

// NewID returns a random version 4 UUID in canonical lowercase form.
func NewID(t testing.TB) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// tenant creates a tenant through h.Accounts.
func (h Harness) tenant(t *testing.T) string {
	t.Helper()
	id, err := h.Accounts.CreateTenant(t.Context(), "tenant-"+NewID(t)[:8])
	if err != nil {
		t.Fatalf("CreateTenant: %v", err)
	}
	return id
}

// in runs fn in tenant and fails the test on error.
func (h Harness) in(t *testing.T, tenant string, fn func(ctx context.Context, tx ports.TenantTx) error) {
	t.Helper()
	if err := h.Tenants.InTenant(t.Context(), tenant, fn); err != nil {
		t.Fatalf("InTenant: %v", err)
	}
}

// read runs fn, which only reads, in tenant twice: through InTenant and
// through ReadInTenant, which must see the same.
func (h Harness) read(t *testing.T, tenant string, fn func(ctx context.Context, tx ports.TenantTx) error) {
	t.Helper()
	if err := h.Tenants.InTenant(t.Context(), tenant, fn); err != nil {
		t.Fatalf("InTenant: %v", err)
	}
	if err := h.Tenants.ReadInTenant(t.Context(), tenant, fn); err != nil {
		t.Fatalf("ReadInTenant: %v", err)
	}
}

// try runs fn in tenant and returns its error.
func (h Harness) try(t *testing.T, tenant string, fn func(ctx context.Context, tx ports.TenantTx) error) error {
	t.Helper()
	return h.Tenants.InTenant(t.Context(), tenant, fn)
}

// newServer builds a server of tenant named name, without a credential.
func newServer(t *testing.T, tenant, name string) *server.Server {
	t.Helper()
	n, err := server.ParseName(name)
	if err != nil {
		t.Fatal(err)
	}
	u, err := server.ParseURL("https://" + strings.ReplaceAll(name, "_", "-") + ".example.com/mcp")
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.NewServer(NewID(t), tenant, n, u, server.NoCredential(), true, T0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// seedServer stores a server of tenant and returns its id.
func (h Harness) seedServer(t *testing.T, tenant, name string, cred []byte) string {
	t.Helper()
	s := newServer(t, tenant, name)
	h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Servers().Insert(ctx, s, cred, 100)
	})
	return s.ID()
}

// seedRepository stores a private repository of tenant and returns its id.
func (h Harness) seedRepository(t *testing.T, tenant, name string) string {
	t.Helper()
	r := newRepository(t, NewID(t), name, policy.VisibilityPrivate)
	h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Repositories().Insert(ctx, r)
	})
	return r.ID()
}

// seedReview stores a queued review run of a repository and returns its id.
func (h Harness) seedReview(t *testing.T, tenant, repositoryID string, createdAt time.Time) string {
	t.Helper()
	r := newRun(t, NewID(t), repositoryID, review.Request{Title: "t", Diff: "diff --git a/x b/x",
		Files: map[string]string{"x": "package x"}}, createdAt)
	h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Reviews().Insert(ctx, r)
	})
	return r.ID()
}

// isErr fails the test unless err matches want.
func isErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: error %v, want %v", what, err, want)
	}
}
