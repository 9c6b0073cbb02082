package mcpclient

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

const (
	// tokenExpiryMargin: a cached access token is used until this long
	// before the expiry its server named, so no request carries one that
	// expires on the way.
	tokenExpiryMargin = 30 * time.Second
	// defaultTokenLifetime is how long a token whose response named no
	// expiry is cached (a 401 refreshes it earlier).
	defaultTokenLifetime = 5 * time.Minute
	// maxTokensPerTenant bounds one tenant's entries: a tenant at it
	// drops its own expired entries, then its own entry that expires
	// first, never another tenant's.
	maxTokensPerTenant = 256
	// maxCachedTokens bounds the whole cache: when it is full, expired
	// entries are dropped, then the entry that expires first of the
	// tenant holding the most (so a tenant under its share loses nothing
	// to one that holds more).
	maxCachedTokens = 4096
)

// tokenCache keeps access tokens in memory, per server and credential,
// until their expiry less tokenExpiryMargin, at most maxTokensPerTenant
// per tenant and maxCachedTokens in all. One token request per key is
// in flight at a time: concurrent sessions wait for it.
type tokenCache struct {
	mu      sync.Mutex
	entries map[string]cachedToken
	// perTenant counts the entries of each tenant.
	perTenant map[string]int
	flight    singleflight.Group
}

type cachedToken struct {
	// tenant is the tenant of the server the token is for (the cache's
	// bound is per tenant).
	tenant  string
	access  string
	expires time.Time
	// cred is the credential the token was fetched with, after any
	// rotation of its refresh token: sessions that shared the request
	// continue with it.
	cred server.Credential
}

func newTokenCache() *tokenCache {
	return &tokenCache{entries: map[string]cachedToken{}, perTenant: map[string]int{}}
}

// tokenKey is the server id and a SHA-256 of everything the token
// depends on: kind, token URL, resource, client id, client secret,
// refresh token, stored access token and scopes. Another secret, another scope list or
// another grant never hits the entry of the former one; the key itself
// is not a secret.
func tokenKey(serverID string, resource server.URL, cred server.Credential) string {
	o, _ := cred.OAuth()
	h := sha256.New()
	put := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	put(cred.Kind().String())
	put(o.TokenURL.String())
	put(resource.String())
	put(o.ClientID)
	put(o.ClientSecret)
	put(o.RefreshToken)
	put(o.AccessToken)
	for _, s := range o.Scopes {
		put(s)
	}
	return serverID + "\x00" + hex.EncodeToString(h.Sum(nil))
}

func (c *tokenCache) get(key string, now time.Time) (cachedToken, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !now.Before(e.expires) {
		return cachedToken{}, false
	}
	return e, true
}

// put stores e under keys, for e.tenant: a tenant at its bound makes
// room among its own entries only; a full cache drops expired entries,
// then one of the tenant holding the most.
func (c *tokenCache) put(now time.Time, e cachedToken, keys ...string) {
	if !now.Before(e.expires) {
		return // too short-lived to keep: used once
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if _, ok := c.entries[k]; ok {
			c.remove(k)
		}
		if c.perTenant[e.tenant] >= maxTokensPerTenant {
			c.evict(now, e.tenant, false)
		}
		if len(c.entries) >= maxCachedTokens {
			c.evict(now, "", true)
		}
		c.entries[k] = e
		c.perTenant[e.tenant]++
	}
}

// remove deletes the entry of k, which must exist.
func (c *tokenCache) remove(k string) {
	t := c.entries[k].tenant
	delete(c.entries, k)
	if c.perTenant[t]--; c.perTenant[t] <= 0 {
		delete(c.perTenant, t)
	}
}

// evict drops tenant's expired entries (all: every tenant's); if none
// was, the entry that expires first of tenant (all: of the tenant
// holding the most).
func (c *tokenCache) evict(now time.Time, tenant string, all bool) {
	dropped := false
	for k, v := range c.entries {
		if (all || v.tenant == tenant) && !now.Before(v.expires) {
			c.remove(k)
			dropped = true
		}
	}
	if dropped {
		return
	}
	if all {
		most := 0
		for t, n := range c.perTenant {
			if n > most || (n == most && t < tenant) {
				tenant, most = t, n
			}
		}
	}
	first := ""
	for k, v := range c.entries {
		if v.tenant == tenant && (first == "" || v.expires.Before(c.entries[first].expires)) {
			first = k
		}
	}
	if first != "" {
		c.remove(first)
	}
}

// drop removes the entry of key if it still holds access (a 401 came
// back for it); a newer token that another session fetched stays.
func (c *tokenCache) drop(key, access string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok && e.access == access {
		c.remove(key)
	}
}

// bearerSource gives a session's requests the current access token of
// its OAuth credential. After a rotation it continues with the rotated
// credential.
type bearerSource struct {
	c        *Connector
	tenantID string
	serverID string
	resource server.URL
	save     ports.CredentialSaver

	mu   sync.Mutex
	cred server.Credential
}

func (c *Connector) bearer(target ports.MCPTarget) *bearerSource {
	return &bearerSource{c: c, tenantID: target.TenantID, serverID: target.ServerID, resource: target.URL, save: target.SaveCredential, cred: target.Credential}
}

func (b *bearerSource) current() server.Credential {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cred
}

// token returns a cached access token or fetches one.
func (b *bearerSource) token(ctx context.Context) (string, *failure) {
	cred := b.current()
	key := tokenKey(b.serverID, b.resource, cred)
	if e, ok := b.c.tokens.get(key, b.c.now()); ok {
		return e.access, nil
	}
	return b.fetch(ctx, key, cred)
}

// refresh drops stale (the token a 401 came back for) and fetches anew;
// a connection without a refresh token has nothing to fetch anew with.
func (b *bearerSource) refresh(ctx context.Context, stale string) (string, *failure) {
	cred := b.current()
	if o, _ := cred.OAuth(); cred.Kind() == server.KindOAuthAuthorizationCode && o.RefreshToken == "" {
		return "", fail(ports.ErrServerUnauthorized, errConnectionExpired)
	}
	key := tokenKey(b.serverID, b.resource, cred)
	b.c.tokens.drop(key, stale)
	return b.token(ctx)
}

type fetched struct {
	e cachedToken
	f *failure
}

func (b *bearerSource) fetch(ctx context.Context, key string, cred server.Credential) (string, *failure) {
	ch := b.c.tokens.flight.DoChan(key, func() (any, error) {
		// The request runs on even if the caller that started it gives
		// up: others may wait for it, and a rotated refresh token must be
		// saved whoever asked. Each of its requests is bounded by the
		// guard's timeout.
		// The token request and the save of a rotated refresh token get
		// three timeouts together.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*b.c.opts.Timeout)
		defer cancel()
		e, f := b.c.requestToken(fctx, b.serverID, b.resource, cred, b.save)
		if f == nil {
			e.tenant = b.tenantID
			b.c.tokens.put(b.c.now(), e, key, tokenKey(b.serverID, b.resource, e.cred))
		}
		return fetched{e: e, f: f}, nil
	})
	select {
	case <-ctx.Done():
		return "", fail(ports.ErrTimeout, ctx.Err())
	case r := <-ch:
		res := r.Val.(fetched)
		if res.f != nil {
			return "", res.f
		}
		b.mu.Lock()
		b.cred = res.e.cred
		b.mu.Unlock()
		return res.e.access, nil
	}
}

// errNotConnected: a code-flow credential without a connection.
var errNotConnected = errors.New("oauth_authorization_code credential not connected")

// errConnectionExpired: a connection without a refresh token whose access
// token has expired (or was refused: there is nothing to refresh it with).
var errConnectionExpired = errors.New("oauth_authorization_code connection without refresh token expired")

// requestToken makes the token request of cred: the client-credentials
// grant, or the refresh-token grant of a connected code flow, always with
// RFC 8707's resource (the MCP server's URL), at the credential's token
// URL only. A refresh token the server rotated is saved before the access
// token is used; if saving fails, so does the connection. A refusal
// (invalid_client, invalid_grant, …) is ErrServerUnauthorized.
func (c *Connector) requestToken(ctx context.Context, serverID string, resource server.URL, cred server.Credential, save ports.CredentialSaver) (cachedToken, *failure) {
	o, ok := cred.OAuth()
	if !ok || o.TokenURL.IsZero() {
		return cachedToken{}, fail(ports.ErrServerUnauthorized, errNotConnected)
	}
	r := oauthRequest{method: "POST", url: o.TokenURL, form: url.Values{}}
	switch cred.Kind() {
	case server.KindOAuthClientCredentials:
		r.form.Set("grant_type", "client_credentials")
		if len(o.Scopes) > 0 {
			r.form.Set("scope", strings.Join(o.Scopes, " "))
		}
	case server.KindOAuthAuthorizationCode:
		if !o.Connected() {
			return cachedToken{}, fail(ports.ErrServerUnauthorized, errNotConnected)
		}
		if o.RefreshToken == "" {
			// A connection without a refresh token: the code exchange's
			// access token until it expires, then a new connection.
			if exp := o.AccessExpiresAt.Add(-tokenExpiryMargin); c.now().Before(exp) {
				return cachedToken{access: o.AccessToken, expires: exp, cred: cred}, nil
			}
			return cachedToken{}, fail(ports.ErrServerUnauthorized, errConnectionExpired)
		}
		r.form.Set("grant_type", "refresh_token")
		r.form.Set("refresh_token", o.RefreshToken)
	default:
		return cachedToken{}, fail(ports.ErrServerUnauthorized, errors.New("not an oauth credential"))
	}
	r.form.Set("resource", resource.String())
	if f := clientAuth(&r, o.ClientID, o.ClientSecret, o.Issuer, o.ClientAuth, c.opts.Assertions); f != nil {
		return cachedToken{}, f
	}

	resp, f := c.egress().send(ctx, r)
	if f != nil {
		c.opts.Logger.Debug().Err(f.cause).Str("code", f.code.Error()).Str("server", serverID).Msg("oauth token request failed")
		return cachedToken{}, f
	}
	ans, err := parseTokenResponse(resp.status, resp.body)
	if err != nil {
		f = tokenFailure(err)
		c.opts.Logger.Debug().Err(f.cause).Str("code", f.code.Error()).Str("server", serverID).Msg("oauth token request refused")
		return cachedToken{}, f
	}
	now := c.now()
	life := ans.expiresIn
	if life == 0 {
		life = defaultTokenLifetime
	}
	e := cachedToken{access: ans.access, expires: now.Add(life - tokenExpiryMargin), cred: cred}
	if cred.Kind() == server.KindOAuthAuthorizationCode && ans.refresh != "" && ans.refresh != o.RefreshToken {
		rotated, err := cred.WithRefreshToken(ans.refresh)
		if err == nil && save == nil {
			err = errors.New("no credential saver for a rotated refresh token")
		}
		if err == nil {
			err = save(ctx, rotated)
		}
		if err != nil {
			// The old refresh token is spent: the next run needs a new
			// connection either way.
			f := fail(ports.ErrServerUnauthorized, errors.New("rotated refresh token not saved"))
			c.opts.Logger.Debug().Str("cause", errorKind(err)).Str("code", f.code.Error()).Str("server", serverID).Msg("oauth refresh token rotation failed")
			return cachedToken{}, f
		}
		e.cred = rotated
	}
	return e, nil
}

// tokenFailure is the failure of a token answer that was not a token:
// the authorization server's refusal (a 4xx error), its own failure (a
// 5xx), or an answer that is no token response at all.
func tokenFailure(err error) *failure {
	var te *tokenError
	switch {
	case errors.As(err, &te) && te.status < 500:
		return fail(ports.ErrServerUnauthorized, te)
	case errors.As(err, &te):
		return fail(ports.ErrServerUnreachable, te)
	}
	return fail(ports.ErrProtocol, err)
}

// errorKind names an error of the app's saver by type only: its text is
// not ours to log.
func errorKind(err error) string {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err.Error()
	}
	return "saver error"
}
