package mcpclient

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/limits"
)

// One tenant that fills the token cache evicts only its own entries:
// tenant A inserting ten times its share keeps at most its share, its
// newest token among them, and tenant B's token survives.
func TestTokenCacheIsBoundedPerTenant(t *testing.T) {
	c := newTokenCache()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c.put(now, cachedToken{tenant: "tenant-b", access: "b-token", expires: now.Add(time.Minute)}, "b-key")
	for i := range 10 * maxTokensPerTenant {
		// A's tokens live longer than B's: an eviction by expiry alone
		// would pick B's.
		c.put(now, cachedToken{tenant: "tenant-a", access: fmt.Sprint("a-", i), expires: now.Add(time.Hour + time.Duration(i)*time.Second)}, fmt.Sprint("a-key-", i))
	}
	if e, ok := c.get("b-key", now); !ok || e.access != "b-token" {
		t.Errorf("tenant B's token after tenant A filled the cache: %+v, %v; want it kept", e, ok)
	}
	if n := c.perTenant["tenant-a"]; n > maxTokensPerTenant {
		t.Errorf("tenant A holds %d entries, want at most %d", n, maxTokensPerTenant)
	}
	if n := len(c.entries); n != maxTokensPerTenant+1 {
		t.Errorf("%d entries, want A's share and B's one", n)
	}
	last := fmt.Sprint("a-key-", 10*maxTokensPerTenant-1)
	if _, ok := c.get(last, now); !ok {
		t.Error("tenant A's newest token was not kept")
	}
	// An expired entry of A is dropped before a live one.
	later := now.Add(time.Hour + time.Duration(10*maxTokensPerTenant-maxTokensPerTenant/2)*time.Second)
	c.put(later, cachedToken{tenant: "tenant-a", access: "fresh", expires: later.Add(time.Hour)}, "a-fresh")
	if _, ok := c.get(last, later); !ok {
		t.Error("a live token of A evicted while A had expired ones")
	}
	if _, ok := c.get("b-key", now); !ok {
		t.Error("tenant B's token evicted by A's expired entries")
	}
	// A dropped entry is no longer counted.
	c.drop("b-key", "b-token")
	if n, ok := c.perTenant["tenant-b"]; ok {
		t.Errorf("tenant B counted %d entries after its only one was dropped", n)
	}
}

// A full cache (every tenant within its share) makes room at the tenant
// holding the most, never at a smaller one.
func TestFullTokenCacheEvictsTheLargestTenant(t *testing.T) {
	c := newTokenCache()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	put := func(tenant, key string, life time.Duration) {
		c.put(now, cachedToken{tenant: tenant, access: key, expires: now.Add(life)}, key)
	}
	for i := range 100 {
		put("small", fmt.Sprint("small-", i), time.Minute)
	}
	for n := 0; len(c.entries) < maxCachedTokens; n++ {
		put(fmt.Sprint("big-", n/maxTokensPerTenant), fmt.Sprint("big-key-", n), time.Hour)
	}
	put("small", "small-new", time.Minute)
	if len(c.entries) != maxCachedTokens {
		t.Errorf("%d entries, want the cap %d", len(c.entries), maxCachedTokens)
	}
	for i := range 100 {
		if _, ok := c.get(fmt.Sprint("small-", i), now); !ok {
			t.Fatalf("the small tenant's token %d evicted by its own insert into a full cache", i)
		}
	}
	if _, ok := c.get("small-new", now); !ok || c.perTenant["small"] != 101 {
		t.Errorf("the small tenant's new token not kept (%d entries)", c.perTenant["small"])
	}
}

// A session's token is cached under its target's tenant: the bound per
// tenant counts what each tenant's sessions fetched.
func TestTokensAreCachedPerTenant(t *testing.T) {
	srv := newTokenServer(3600)
	ts := startServer(t, srv)
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 2*time.Second)
	for _, tt := range []struct{ server, tenant string }{{"srv-a", "tenant-a"}, {"srv-b", "tenant-b"}, {"srv-c", "tenant-b"}} {
		target := srv.target(t, ts)
		target.ServerID, target.TenantID = tt.server, tt.tenant
		s, err := c.OpenSession(context.Background(), target, limits.DiscoveryResponseCap)
		if err != nil {
			t.Fatalf("OpenSession(%s): %v", tt.server, err)
		}
		s.Close()
	}
	c.tokens.mu.Lock()
	defer c.tokens.mu.Unlock()
	if a, b := c.tokens.perTenant["tenant-a"], c.tokens.perTenant["tenant-b"]; a != 1 || b != 2 || len(c.tokens.perTenant) != 2 {
		t.Errorf("cached per tenant: %v, want tenant-a 1 and tenant-b 2", c.tokens.perTenant)
	}
}
