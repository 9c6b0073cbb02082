// Package config reads the service's configuration from the environment
// (docs/configuration.md) once at startup and validates all of it, so a bad
// value is a one-line startup error and never a surprise at request time.
package config

import (
	"cmp"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/codelotse/codelotse/domain/auditstream"

	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/rs/zerolog"
)

// DefaultDatabaseURL is the local PostgreSQL that `make run` prepares when
// QUAVON_DATABASE_URL is not set.
const DefaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/codelotse?sslmode=disable"

// DefaultHTTPAddr is the API's listen address when QUAVON_HTTP_ADDR is not set.
const DefaultHTTPAddr = "127.0.0.1:8080"

// MaxWorkerConcurrency bounds QUAVON_WORKER_CONCURRENCY.
const MaxWorkerConcurrency = 1000

// MaxAuthFailureLimit bounds QUAVON_AUTH_FAILURE_LIMIT.
const MaxAuthFailureLimit = 100000

// Key is one entry of the credential key ring.
type Key struct {
	ID     string
	Secret []byte
}

// SigningKey is one entry of the OAuth signing key ring
// (QUAVON_OAUTH_SIGNING_KEYS): an id, published as the key's kid, and the
// private key, an *ecdsa.PrivateKey on P-256 (ES256) or an
// ed25519.PrivateKey (EdDSA).
type SigningKey struct {
	ID  string
	Key crypto.Signer
}

// Config is the whole validated configuration.
type Config struct {
	DatabaseURL string
	HTTPAddr    string
	// PublicURL is the origin users reach the web interface at
	// (QUAVON_PUBLIC_URL, default http:// and HTTPAddr): "scheme://host[:port]",
	// without a path. State-changing requests from any other Origin are
	// refused; an https origin makes the session cookie Secure.
	PublicURL    string
	Instance     gate.Instance
	Edition      gate.Edition
	PrivateHosts netpolicy.PrivateHosts
	// Keys is the credential key ring; Keys[0] is the primary key. Empty
	// means credentials can neither be stored nor read.
	Keys     []Key
	LogLevel zerolog.Level
	// CallTimeout is MCP_CALL_TIMEOUT_MS; tests shorten it through
	// QUAVON_MCP_CALL_TIMEOUT_MS, never by waiting.
	CallTimeout time.Duration
	// WorkerConcurrency is how many reviews a worker replica runs at once
	// (QUAVON_WORKER_CONCURRENCY); zero is the worker's default.
	WorkerConcurrency int
	// AuthFailureLimit is how many failed authentications one client
	// address may make per minute before it is answered rate_limited
	// (QUAVON_AUTH_FAILURE_LIMIT); zero is the default of app/accounts.
	AuthFailureLimit int
	// OAuthDCRIssuers are the authorization servers (exact issuer URLs)
	// at which a code-flow MCP server without a client id may register one
	// dynamically (QUAVON_MCP_OAUTH_DCR_ISSUERS); empty by default.
	OAuthDCRIssuers []string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client address (QUAVON_TRUSTED_PROXIES, comma-separated CIDRs);
	// empty by default: the client is the connection's peer.
	TrustedProxies netpolicy.TrustedProxies
	// AllowedURLs is the operator's allowlist of MCP server URLs
	// (QUAVON_MCP_ALLOWED_URLS, comma-separated https URL prefixes);
	// empty by default: any URL the other rules admit.
	AllowedURLs server.AllowedURLs
	// CallCap caps every server's maxCallsPerMinute
	// (QUAVON_MCP_MAX_CALLS_PER_MINUTE, 1 to limits.MaxCallsPerMinute,
	// which is its default): a higher limit cannot be set, and a stored
	// one counts as the cap.
	CallCap server.CallCap
	// RecheckInterval is how often the tools of a server with pinned
	// tools are listed again between reviews (QUAVON_MCP_RECHECK_INTERVAL,
	// a Go duration of at least MinRecheckInterval, default
	// DefaultRecheckInterval); zero turns the recheck off.
	RecheckInterval time.Duration
	// AuditWebhook is the audit stream's sink, when set.
	AuditWebhook AuditWebhook
	// OAuthSigningKeys is the key ring of private_key_jwt client
	// assertions (QUAVON_OAUTH_SIGNING_KEYS); the first key signs, every
	// key is published. Empty: no signing keys, private_key_jwt is
	// unavailable.
	OAuthSigningKeys []SigningKey
	LLM              LLM
}

// AuditWebhook is where the audit stream goes: QUAVON_AUDIT_WEBHOOK_URL
// (an https URL, reached through the guarded egress) and
// QUAVON_AUDIT_WEBHOOK_SECRET (a Standard Webhooks secret, "whsec_" and
// the key in base64), both or neither.
type AuditWebhook struct {
	URL server.URL
	// Key signs every delivery; nil when the stream is off.
	Key []byte
}

// On reports whether the audit stream is configured.
func (w AuditWebhook) On() bool { return w.Key != nil }

// The bounds of QUAVON_MCP_RECHECK_INTERVAL.
const (
	MinRecheckInterval     = 10 * time.Second
	DefaultRecheckInterval = time.Hour
)

// LLM is the model endpoint's configuration.
type LLM struct {
	Provider  string
	BaseURL   string
	APIKey    string
	Model     string
	Script    string
	ScriptLog string
}

// Error is a configuration error naming the variable; it never repeats the
// value, which may be a secret.
type Error struct {
	Var    string
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("configuration: %s %s", e.Var, e.Reason) }

var keyID = regexp.MustCompile(`^[a-z0-9]{1,16}$`)

// Load reads the configuration through getenv (os.Getenv in production, a
// map in tests). It returns every problem it finds, joined.
func Load(getenv func(string) string) (Config, error) {
	get := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	var errs Errors
	c := Config{
		DatabaseURL: get("QUAVON_DATABASE_URL", DefaultDatabaseURL),
		HTTPAddr:    get("QUAVON_HTTP_ADDR", DefaultHTTPAddr),
		CallTimeout: limits.CallTimeout,
	}
	if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
		errs = append(errs, &Error{"QUAVON_HTTP_ADDR", "must be host:port"})
	}
	if origin, ok := parseOrigin(get("QUAVON_PUBLIC_URL", "http://"+c.HTTPAddr)); ok {
		c.PublicURL = origin
	} else {
		errs = append(errs, &Error{"QUAVON_PUBLIC_URL", "must be an http or https origin (scheme://host[:port], no path, query or user info)"})
	}
	var err error
	// The instance switch is taken verbatim, not trimmed: only the exact
	// words allowed and disabled mean something, so " allowed" (a quoting
	// slip in a deployment template) stops the instance instead of
	// silently turning MCP context on. Unset or empty means disabled.
	if c.Instance, err = gate.ParseInstance(cmp.Or(getenv("QUAVON_MCP_CONTEXT"), "disabled")); err != nil {
		errs = append(errs, &Error{"QUAVON_MCP_CONTEXT", "must be allowed or disabled"})
	}
	if c.Edition, err = gate.ParseEdition(get("QUAVON_EDITION", "self-hosted")); err != nil {
		errs = append(errs, &Error{"QUAVON_EDITION", "must be self-hosted or enterprise"})
	}
	if c.PrivateHosts, err = netpolicy.ParsePrivateHosts(getenv("QUAVON_MCP_PRIVATE_HOSTS")); err != nil {
		errs = append(errs, &Error{"QUAVON_MCP_PRIVATE_HOSTS", "must be comma-separated host names"})
	}
	var keyErr *Error
	if c.Keys, keyErr = parseKeys(getenv("QUAVON_ENCRYPTION_KEYS")); keyErr != nil {
		errs = append(errs, keyErr)
	}
	if c.LogLevel, err = zerolog.ParseLevel(get("QUAVON_LOG_LEVEL", "info")); err != nil || c.LogLevel == zerolog.NoLevel {
		errs = append(errs, &Error{"QUAVON_LOG_LEVEL", "must be trace, debug, info, warn, error, fatal, panic or disabled"})
	}
	maxMS := int(limits.CallTimeout.Milliseconds())
	c.CallTimeout = time.Duration(intVar(getenv, "QUAVON_MCP_CALL_TIMEOUT_MS", 1, maxMS, maxMS, &errs)) * time.Millisecond
	c.WorkerConcurrency = intVar(getenv, "QUAVON_WORKER_CONCURRENCY", 1, MaxWorkerConcurrency, 0, &errs)
	c.AuthFailureLimit = intVar(getenv, "QUAVON_AUTH_FAILURE_LIMIT", 1, MaxAuthFailureLimit, 0, &errs)
	// intVar keeps the value within 1 to MaxCallsPerMinute, which is what
	// ParseCallCap accepts.
	c.CallCap, _ = server.ParseCallCap(intVar(getenv, "QUAVON_MCP_MAX_CALLS_PER_MINUTE", 1, limits.MaxCallsPerMinute, limits.MaxCallsPerMinute, &errs))
	if c.OAuthDCRIssuers, err = parseIssuers(getenv("QUAVON_MCP_OAUTH_DCR_ISSUERS")); err != nil {
		errs = append(errs, &Error{"QUAVON_MCP_OAUTH_DCR_ISSUERS", "must be comma-separated https issuer URLs (no user info, query or fragment)"})
	}
	if c.TrustedProxies, err = netpolicy.ParseTrustedProxies(getenv("QUAVON_TRUSTED_PROXIES")); err != nil {
		errs = append(errs, &Error{"QUAVON_TRUSTED_PROXIES", "must be comma-separated CIDRs (10.0.0.0/8, fd00::/8) or addresses"})
	}
	if c.AllowedURLs, err = server.ParseAllowedURLs(getenv("QUAVON_MCP_ALLOWED_URLS")); err != nil {
		errs = append(errs, &Error{"QUAVON_MCP_ALLOWED_URLS", allowedURLsReason(err)})
	}
	c.RecheckInterval = recheckInterval(getenv("QUAVON_MCP_RECHECK_INTERVAL"), &errs)
	if c.OAuthSigningKeys, keyErr = parseSigningKeys(getenv("QUAVON_OAUTH_SIGNING_KEYS")); keyErr != nil {
		errs = append(errs, keyErr)
	}
	c.AuditWebhook = auditWebhook(getenv("QUAVON_AUDIT_WEBHOOK_URL"), getenv("QUAVON_AUDIT_WEBHOOK_SECRET"), &errs)
	c.LLM = loadLLM(getenv, get("QUAVON_LLM_PROVIDER", "openai"), &errs)
	if len(errs) > 0 {
		return c, errs
	}
	return c, nil
}

// intVar reads the optional integer setting name, lo to hi; def when it
// is unset or wrong (a wrong one is added to errs).
func intVar(getenv func(string) string, name string, lo, hi, def int, errs *Errors) int {
	v := getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		*errs = append(*errs, &Error{name, fmt.Sprintf("must be %d to %d", lo, hi)})
		return def
	}
	return n
}

// recheckInterval reads QUAVON_MCP_RECHECK_INTERVAL: unset, the default;
// "0" (or any zero duration), off; else a Go duration of at least
// MinRecheckInterval. A wrong one is added to errs.
func recheckInterval(v string, errs *Errors) time.Duration {
	if v == "" {
		return DefaultRecheckInterval
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || (d > 0 && d < MinRecheckInterval) {
		*errs = append(*errs, &Error{"QUAVON_MCP_RECHECK_INTERVAL", "must be 0 (off) or a Go duration of at least 10s (1h, 30m)"})
		return DefaultRecheckInterval
	}
	return d
}

// auditWebhook reads the audit stream's two settings: both or neither.
// A wrong one is added to errs, and the stream is off.
func auditWebhook(rawURL, secret string, errs *Errors) AuditWebhook {
	switch {
	case rawURL == "" && secret == "":
		return AuditWebhook{}
	case rawURL == "":
		*errs = append(*errs, &Error{"QUAVON_AUDIT_WEBHOOK_URL", "is required when QUAVON_AUDIT_WEBHOOK_SECRET is set (both or neither)"})
		return AuditWebhook{}
	case secret == "":
		*errs = append(*errs, &Error{"QUAVON_AUDIT_WEBHOOK_SECRET", "is required when QUAVON_AUDIT_WEBHOOK_URL is set (both or neither)"})
		return AuditWebhook{}
	}
	u, uerr := server.ParseURL(rawURL)
	if uerr != nil {
		*errs = append(*errs, &Error{"QUAVON_AUDIT_WEBHOOK_URL", "must be an https URL (no user info, query or fragment)"})
	}
	key, kerr := auditstream.ParseSecret(secret)
	if kerr != nil {
		*errs = append(*errs, &Error{"QUAVON_AUDIT_WEBHOOK_SECRET", kerr.Error()})
	}
	if uerr != nil || kerr != nil {
		return AuditWebhook{}
	}
	return AuditWebhook{URL: u, Key: key}
}

// loadLLM reads the model endpoint's settings for provider.
func loadLLM(getenv func(string) string, provider string, errs *Errors) LLM {
	l := LLM{
		Provider:  provider,
		BaseURL:   getenv("QUAVON_LLM_BASE_URL"),
		APIKey:    getenv("QUAVON_LLM_API_KEY"),
		Model:     getenv("QUAVON_LLM_MODEL"),
		Script:    getenv("QUAVON_LLM_SCRIPT"),
		ScriptLog: getenv("QUAVON_LLM_SCRIPT_LOG"),
	}
	switch l.Provider {
	case "openai":
	case "scripted":
		if l.Script == "" {
			*errs = append(*errs, &Error{"QUAVON_LLM_SCRIPT", "is required when QUAVON_LLM_PROVIDER is scripted"})
		}
	default:
		*errs = append(*errs, &Error{"QUAVON_LLM_PROVIDER", "must be openai or scripted"})
	}
	return l
}

// Errors is every problem Load found; its text is one line, so a startup
// failure prints one line.
type Errors []*Error

func (e Errors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

// parseOrigin returns raw as an origin ("https://host:port"), lower-case,
// without a trailing slash; ok is false for anything else.
func parseOrigin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}

// parseIssuers reads comma-separated https issuer URLs, kept exactly as
// written (an issuer is compared as a string, RFC 8414 §3.3).
func parseIssuers(raw string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(raw, ",") {
		iss := strings.TrimSpace(part)
		if iss == "" {
			continue
		}
		u, err := url.Parse(iss)
		if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" ||
			strings.ContainsAny(iss, " \t") {
			return nil, fmt.Errorf("bad issuer")
		}
		out = append(out, iss)
	}
	return out, nil
}

// allowedURLsReason is the startup error of a bad allowlist entry: its
// position and why, never the entry (it may hold a credential).
func allowedURLsReason(err error) string {
	const format = "must be comma-separated https URL prefixes (https://host[:port][/path], no user info, query or fragment)"
	var ae *server.AllowedURLError
	if errors.As(err, &ae) {
		return format + ": " + ae.Error()
	}
	return format
}

// parseRing reads a key ring of variable name, `ID:BASE64,ID:BASE64`
// (the first entry is the primary key): each ID matches keyID once, each
// BASE64 is standard base64, which key turns into the ring's key or a
// reason. An error names the variable and the entry's position, never the
// entry.
func parseRing[K any](name, raw string, key func(id string, b []byte) (K, string)) ([]K, *Error) {
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	bad := func(i int, reason string) *Error {
		return &Error{name, fmt.Sprintf("entry %d %s", i+1, reason)}
	}
	var keys []K
	seen := map[string]bool{}
	for i, entry := range strings.Split(raw, ",") {
		id, b64, ok := strings.Cut(strings.TrimSpace(entry), ":")
		if !ok || !keyID.MatchString(id) {
			return nil, bad(i, "must be ID:BASE64 with ID matching ^[a-z0-9]{1,16}$")
		}
		if seen[id] {
			return nil, bad(i, "repeats a key id")
		}
		seen[id] = true
		b, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err != nil {
			b = nil
		}
		k, reason := key(id, b)
		if reason != "" {
			return nil, bad(i, reason)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// parseKeys reads QUAVON_ENCRYPTION_KEYS: 32-byte AES keys.
func parseKeys(raw string) ([]Key, *Error) {
	return parseRing("QUAVON_ENCRYPTION_KEYS", raw, func(id string, secret []byte) (Key, string) {
		if len(secret) != 32 {
			return Key{}, "must be a 32-byte key in standard base64"
		}
		return Key{ID: id, Secret: secret}, ""
	})
}

// parseSigningKeys reads QUAVON_OAUTH_SIGNING_KEYS: each BASE64 a PKCS#8
// private key (DER), ECDSA on P-256 or Ed25519, nothing else. The first
// entry signs.
func parseSigningKeys(raw string) ([]SigningKey, *Error) {
	return parseRing("QUAVON_OAUTH_SIGNING_KEYS", raw, func(id string, der []byte) (SigningKey, string) {
		signer, reason := parseSigningKey(der)
		return SigningKey{ID: id, Key: signer}, reason
	})
}

// parseSigningKey reads one PKCS#8 key and keeps it only when it is an
// ES256 or an Ed25519 key; the reason is empty when it is.
func parseSigningKey(der []byte) (crypto.Signer, string) {
	const notPKCS8 = "must be a PKCS#8 private key (DER) in standard base64"
	if len(der) == 0 {
		return nil, notPKCS8
	}
	// One DER value and nothing after it: ParsePKCS8PrivateKey would
	// ignore trailing bytes.
	var whole asn1.RawValue
	if rest, err := asn1.Unmarshal(der, &whole); err != nil || len(rest) != 0 {
		return nil, notPKCS8
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, notPKCS8
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve == elliptic.P256() {
			return k, ""
		}
	case ed25519.PrivateKey:
		return k, ""
	}
	return nil, "must be an ECDSA P-256 (ES256) or Ed25519 key"
}
