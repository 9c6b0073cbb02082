package accounts

import (
	"net/netip"
	"sync"
	"time"

	"github.com/codelotse/codelotse/ports"
)

// Failed authentications are counted in fixed windows, per client address
// and per token prefix (docs/tokens.md).
const (
	// AuthFailureWindow is the window failures are counted in.
	AuthFailureWindow = time.Minute
	// MaxAuthFailuresPerClient (the default; QUAVON_AUTH_FAILURE_LIMIT
	// sets another) failed authentications from one client
	// address (an IPv6 address by its /64) in a window; further failed
	// attempts from it answer rate_limited until the window ends. A
	// correct token is never refused: the limit applies to failures only.
	// Other clients are not affected.
	MaxAuthFailuresPerClient = 20
	// MaxAuthFailuresPerPrefix failed authentications with tokens that
	// start alike (the first [TokenPrefixLen] characters) in a window;
	// further failed attempts with that prefix answer rate_limited for
	// every client that failed in the window, while a client without
	// failures still gets an unauthenticated answer (and a correct
	// token, from anywhere, gets in).
	MaxAuthFailuresPerPrefix = 10
	// TokenPrefixLen is how much of a presented token keys the prefix
	// count: "clt_" and 8 characters of the secret (48 bits).
	TokenPrefixLen = 12
	// maxLimiterKeys bounds each table; when full, windows that ended are
	// dropped first, then the oldest window.
	maxLimiterKeys = 65536
)

type window struct {
	start time.Time
	n     int
}

// AuthLimiter counts failed authentications (API bearer tokens and web
// sign-ins) in memory, per process: every replica limits on its own. Safe
// for concurrent use; a nil limiter limits nothing.
type AuthLimiter struct {
	clock     ports.Clock
	perClient int
	perPrefix int
	mu        sync.Mutex
	clients   map[string]window
	prefixes  map[string]window
}

// NewAuthLimiter returns an empty limiter on clock with the default
// limits.
func NewAuthLimiter(clock ports.Clock) *AuthLimiter {
	return NewAuthLimiterWith(clock, MaxAuthFailuresPerClient)
}

// NewAuthLimiterWith returns a limiter allowing perClient failures per
// client address and window (QUAVON_AUTH_FAILURE_LIMIT; 0 or less: the
// default); the per-prefix limit scales with it (half, at least one).
func NewAuthLimiterWith(clock ports.Clock, perClient int) *AuthLimiter {
	perPrefix := MaxAuthFailuresPerPrefix
	if perClient <= 0 {
		perClient = MaxAuthFailuresPerClient
	} else if perClient != MaxAuthFailuresPerClient {
		perPrefix = max(1, perClient/2)
	}
	return &AuthLimiter{clock: clock, perClient: perClient, perPrefix: perPrefix, clients: map[string]window{}, prefixes: map[string]window{}}
}

// ClientKey is the key of a client address: the address itself, an IPv6
// address by its /64 (one host usually has a whole /64); "" when there is
// none.
func ClientKey(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

func prefixKey(token string) string {
	if len(token) > TokenPrefixLen {
		return token[:TokenPrefixLen]
	}
	return token
}

// count is the failures of key in the window at now (0 if it ended).
func count(m map[string]window, key string, now time.Time) (window, bool) {
	w, ok := m[key]
	if !ok || !now.Before(w.start.Add(AuthFailureWindow)) {
		return window{}, false
	}
	return w, true
}

// Wait reports how long client must wait before trying token: 0 when it
// may try now.
func (l *AuthLimiter) Wait(client, token string) time.Duration {
	if l == nil {
		return 0
	}
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	c, cok := count(l.clients, ClientKey(client), now)
	if cok && c.n >= l.perClient {
		return c.start.Add(AuthFailureWindow).Sub(now)
	}
	if p, ok := count(l.prefixes, prefixKey(token), now); ok && p.n >= l.perPrefix && cok && c.n > 0 {
		return p.start.Add(AuthFailureWindow).Sub(now)
	}
	return 0
}

// Failed counts a failed authentication of client with token.
func (l *AuthLimiter) Failed(client, token string) {
	if l == nil {
		return
	}
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	add(l.clients, ClientKey(client), now)
	add(l.prefixes, prefixKey(token), now)
}

func add(m map[string]window, key string, now time.Time) {
	w, ok := count(m, key, now)
	if !ok {
		if len(m) >= maxLimiterKeys {
			evict(m, now)
		}
		w = window{start: now}
	}
	w.n++
	m[key] = w
}

// evict drops the windows that ended; if none did, the oldest one.
func evict(m map[string]window, now time.Time) {
	var oldest string
	var at time.Time
	for k, w := range m {
		if !now.Before(w.start.Add(AuthFailureWindow)) {
			delete(m, k)
			continue
		}
		if oldest == "" || w.start.Before(at) {
			oldest, at = k, w.start
		}
	}
	if len(m) >= maxLimiterKeys && oldest != "" {
		delete(m, oldest)
	}
}
