package config_test

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/config"
	"github.com/codelotse/codelotse/domain/server"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

var key32 = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

func TestLoadDefaults(t *testing.T) {
	c, err := config.Load(env(nil))
	if err != nil {
		t.Fatalf("Load(empty) error = %v", err)
	}
	if c.DatabaseURL != config.DefaultDatabaseURL || c.HTTPAddr != "127.0.0.1:8080" {
		t.Errorf("defaults = %q, %q", c.DatabaseURL, c.HTTPAddr)
	}
	if c.Instance.String() != "disabled" || c.Edition.String() != "self-hosted" {
		t.Errorf("gates = %v, %v; want disabled, self-hosted", c.Instance, c.Edition)
	}
	if c.PublicURL != "http://127.0.0.1:8080" {
		t.Errorf("PublicURL = %q, want http:// and the listen address", c.PublicURL)
	}
	if len(c.Keys) != 0 || len(c.PrivateHosts.Hosts()) != 0 || c.CallTimeout != 10*time.Second || c.LLM.Provider != "openai" || c.WorkerConcurrency != 0 {
		t.Errorf("unexpected defaults: %+v", c)
	}
	if c.CallCap.PerMinute() != 600 {
		t.Errorf("CallCap = %d, want 600", c.CallCap.PerMinute())
	}
}

func TestLoadValues(t *testing.T) {
	c, err := config.Load(env(map[string]string{
		"QUAVON_MCP_CONTEXT":              "allowed",
		"QUAVON_EDITION":                  "enterprise",
		"QUAVON_MCP_PRIVATE_HOSTS":        " Wiki.Internal , jira.corp ",
		"QUAVON_ENCRYPTION_KEYS":          "k2:" + key32 + ",k1:" + key32,
		"QUAVON_MCP_CALL_TIMEOUT_MS":      "250",
		"QUAVON_WORKER_CONCURRENCY":       "100",
		"QUAVON_AUTH_FAILURE_LIMIT":       "50",
		"QUAVON_MCP_MAX_CALLS_PER_MINUTE": "30",
		"QUAVON_LLM_PROVIDER":             "scripted",
		"QUAVON_LLM_SCRIPT":               "script.json",
		"QUAVON_PUBLIC_URL":               "https://Review.Example.com/",
	}))
	if err != nil {
		t.Fatalf("Load error = %v", err)
	}
	if c.Instance.String() != "allowed" || c.Edition.String() != "enterprise" {
		t.Errorf("gates = %v, %v", c.Instance, c.Edition)
	}
	if strings.Join(c.PrivateHosts.Hosts(), ",") != "wiki.internal,jira.corp" {
		t.Errorf("PrivateHosts = %v", c.PrivateHosts)
	}
	if len(c.Keys) != 2 || c.Keys[0].ID != "k2" || len(c.Keys[0].Secret) != 32 {
		t.Errorf("Keys = %d entries, primary %q", len(c.Keys), c.Keys[0].ID)
	}
	if c.PublicURL != "https://review.example.com" {
		t.Errorf("PublicURL = %q, want the origin in lower case", c.PublicURL)
	}
	if c.CallTimeout != 250*time.Millisecond {
		t.Errorf("CallTimeout = %v", c.CallTimeout)
	}
	if c.WorkerConcurrency != 100 {
		t.Errorf("WorkerConcurrency = %d, want 100", c.WorkerConcurrency)
	}
	if c.AuthFailureLimit != 50 {
		t.Errorf("AuthFailureLimit = %d, want 50", c.AuthFailureLimit)
	}
	if c.CallCap.PerMinute() != 30 {
		t.Errorf("CallCap = %d, want 30", c.CallCap.PerMinute())
	}
}

func TestLoadRefusesBadValuesOnOneLine(t *testing.T) {
	tests := []struct {
		name, key, value, want string
	}{
		{"unknown instance", "QUAVON_MCP_CONTEXT", "enabled", "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"instance true", "QUAVON_MCP_CONTEXT", "true", "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"instance yes", "QUAVON_MCP_CONTEXT", "yes", "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"instance 1", "QUAVON_MCP_CONTEXT", "1", "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"instance case", "QUAVON_MCP_CONTEXT", "Allowed", "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"instance leading space", "QUAVON_MCP_CONTEXT", " allowed", "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"instance trailing newline", "QUAVON_MCP_CONTEXT", "allowed\n", "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"instance blank", "QUAVON_MCP_CONTEXT", " ", "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"unknown edition", "QUAVON_EDITION", "cloud", "QUAVON_EDITION must be self-hosted or enterprise"},
		{"key without id", "QUAVON_ENCRYPTION_KEYS", key32, "QUAVON_ENCRYPTION_KEYS entry 1"},
		{"key id uppercase", "QUAVON_ENCRYPTION_KEYS", "K1:" + key32, "QUAVON_ENCRYPTION_KEYS entry 1"},
		{"key id too long", "QUAVON_ENCRYPTION_KEYS", "abcdefghijklmnopq:" + key32, "QUAVON_ENCRYPTION_KEYS entry 1"},
		{"short key", "QUAVON_ENCRYPTION_KEYS", "k1:" + base64.StdEncoding.EncodeToString(make([]byte, 16)), "32-byte key"},
		{"not base64", "QUAVON_ENCRYPTION_KEYS", "k1:!!!!", "32-byte key"},
		{"url-safe base64", "QUAVON_ENCRYPTION_KEYS", "k1:" + base64.URLEncoding.EncodeToString([]byte("0123456789abcdef0123456789abc>?~")), "32-byte key"},
		{"second entry bad", "QUAVON_ENCRYPTION_KEYS", "k1:" + key32 + ",k2:xx", "entry 2"},
		{"repeated id", "QUAVON_ENCRYPTION_KEYS", "k1:" + key32 + ",k1:" + key32, "repeats a key id"},
		{"empty entry", "QUAVON_ENCRYPTION_KEYS", "k1:" + key32 + ",", "entry 2"},
		{"log level", "QUAVON_LOG_LEVEL", "loud", "QUAVON_LOG_LEVEL"},
		{"http addr", "QUAVON_HTTP_ADDR", "8080", "QUAVON_HTTP_ADDR"},
		{"provider", "QUAVON_LLM_PROVIDER", "anthropic", "QUAVON_LLM_PROVIDER"},
		{"scripted without script", "QUAVON_LLM_PROVIDER", "scripted", "QUAVON_LLM_SCRIPT is required"},
		{"timeout above the cap", "QUAVON_MCP_CALL_TIMEOUT_MS", "10001", "QUAVON_MCP_CALL_TIMEOUT_MS"},
		{"dcr issuer http", "QUAVON_MCP_OAUTH_DCR_ISSUERS", "http://as.example.com", "QUAVON_MCP_OAUTH_DCR_ISSUERS"},
		{"dcr issuer with query", "QUAVON_MCP_OAUTH_DCR_ISSUERS", "https://as.example.com?x=1", "QUAVON_MCP_OAUTH_DCR_ISSUERS"},
		{"dcr issuer with user", "QUAVON_MCP_OAUTH_DCR_ISSUERS", "https://u@as.example.com", "QUAVON_MCP_OAUTH_DCR_ISSUERS"},
		{"dcr issuer not a url", "QUAVON_MCP_OAUTH_DCR_ISSUERS", "as.example.com", "QUAVON_MCP_OAUTH_DCR_ISSUERS"},
		{"public url path", "QUAVON_PUBLIC_URL", "https://review.example.com/ui", "QUAVON_PUBLIC_URL"},
		{"public url scheme", "QUAVON_PUBLIC_URL", "ftp://review.example.com", "QUAVON_PUBLIC_URL"},
		{"public url query", "QUAVON_PUBLIC_URL", "https://review.example.com?x=1", "QUAVON_PUBLIC_URL"},
		{"public url user", "QUAVON_PUBLIC_URL", "https://me@review.example.com", "QUAVON_PUBLIC_URL"},
		{"timeout zero", "QUAVON_MCP_CALL_TIMEOUT_MS", "0", "QUAVON_MCP_CALL_TIMEOUT_MS"},
		{"concurrency zero", "QUAVON_WORKER_CONCURRENCY", "0", "QUAVON_WORKER_CONCURRENCY must be 1 to 1000"},
		{"concurrency above the cap", "QUAVON_WORKER_CONCURRENCY", "1001", "QUAVON_WORKER_CONCURRENCY"},
		{"concurrency not a number", "QUAVON_WORKER_CONCURRENCY", "many", "QUAVON_WORKER_CONCURRENCY"},
		{"auth failure limit zero", "QUAVON_AUTH_FAILURE_LIMIT", "0", "QUAVON_AUTH_FAILURE_LIMIT must be 1 to 100000"},
		{"auth failure limit not a number", "QUAVON_AUTH_FAILURE_LIMIT", "lots", "QUAVON_AUTH_FAILURE_LIMIT"},
		{"calls per minute zero", "QUAVON_MCP_MAX_CALLS_PER_MINUTE", "0", "QUAVON_MCP_MAX_CALLS_PER_MINUTE must be 1 to 600"},
		{"calls per minute negative", "QUAVON_MCP_MAX_CALLS_PER_MINUTE", "-1", "QUAVON_MCP_MAX_CALLS_PER_MINUTE must be 1 to 600"},
		{"calls per minute above the most", "QUAVON_MCP_MAX_CALLS_PER_MINUTE", "601", "QUAVON_MCP_MAX_CALLS_PER_MINUTE must be 1 to 600"},
		{"calls per minute not a number", "QUAVON_MCP_MAX_CALLS_PER_MINUTE", "ten", "QUAVON_MCP_MAX_CALLS_PER_MINUTE must be 1 to 600"},
		{"calls per minute with a space", "QUAVON_MCP_MAX_CALLS_PER_MINUTE", " 60", "QUAVON_MCP_MAX_CALLS_PER_MINUTE must be 1 to 600"},
		{"trusted proxy not a CIDR", "QUAVON_TRUSTED_PROXIES", "10.0.0.0/8, ingress.local", "QUAVON_TRUSTED_PROXIES must be comma-separated CIDRs"},
		{"trusted proxy prefix too long", "QUAVON_TRUSTED_PROXIES", "10.0.0.0/33", "QUAVON_TRUSTED_PROXIES"},
		{"trusted proxy wildcard", "QUAVON_TRUSTED_PROXIES", "*", "QUAVON_TRUSTED_PROXIES"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Load(env(map[string]string{tt.key: tt.value}))
			if err == nil {
				t.Fatalf("Load(%s=%q) error = nil, want %q", tt.key, tt.value, tt.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Errorf("Load(%s=%q) error = %q, want one line containing %q", tt.key, tt.value, msg, tt.want)
			}
			if len(tt.value) > 8 && strings.Contains(msg, tt.value) {
				t.Errorf("error %q repeats the value", msg)
			}
		})
	}
}

func TestLoadReportsEveryProblem(t *testing.T) {
	_, err := config.Load(env(map[string]string{"QUAVON_MCP_CONTEXT": "x", "QUAVON_EDITION": "y"}))
	errs, ok := err.(config.Errors)
	if !ok || len(errs) != 2 {
		t.Fatalf("Load error = %#v, want two config errors", err)
	}
}

func TestLoadTrustedProxies(t *testing.T) {
	c, err := config.Load(env(nil))
	if err != nil || c.TrustedProxies.Len() != 0 {
		t.Fatalf("default trusted proxies %d, %v; want none", c.TrustedProxies.Len(), err)
	}
	if got := c.TrustedProxies.ClientAddr("10.0.0.1:1234", []string{"198.51.100.1"}); got != "10.0.0.1" {
		t.Errorf("by default the client is %q, want the peer", got)
	}
	c, err = config.Load(env(map[string]string{"QUAVON_TRUSTED_PROXIES": " 10.0.0.0/8 , fd00::/8,"}))
	if err != nil || c.TrustedProxies.Len() != 2 {
		t.Fatalf("trusted proxies %d, %v; want 2", c.TrustedProxies.Len(), err)
	}
	if got := c.TrustedProxies.ClientAddr("10.0.0.1:1234", []string{"198.51.100.1"}); got != "198.51.100.1" {
		t.Errorf("behind a trusted proxy the client is %q, want the header's", got)
	}
}

func TestLoadDCRIssuers(t *testing.T) {
	c, err := config.Load(env(nil))
	if err != nil || len(c.OAuthDCRIssuers) != 0 {
		t.Fatalf("default DCR issuers %v, %v; want none", c.OAuthDCRIssuers, err)
	}
	c, err = config.Load(env(map[string]string{"QUAVON_MCP_OAUTH_DCR_ISSUERS": " https://as.example.com , https://login.example.org/tenant-1,"}))
	if err != nil || len(c.OAuthDCRIssuers) != 2 || c.OAuthDCRIssuers[0] != "https://as.example.com" || c.OAuthDCRIssuers[1] != "https://login.example.org/tenant-1" {
		t.Errorf("DCR issuers %q, %v", c.OAuthDCRIssuers, err)
	}
}

func TestLoadAllowedURLs(t *testing.T) {
	c, err := config.Load(env(nil))
	if err != nil || c.AllowedURLs.Len() != 0 {
		t.Fatalf("default allowlist %d entries, %v; want none (any URL)", c.AllowedURLs.Len(), err)
	}
	if !c.AllowedURLs.Allows(mustServerURL(t, "https://anything.example/mcp")) {
		t.Errorf("the default allowlist refuses a URL")
	}
	c, err = config.Load(env(map[string]string{"QUAVON_MCP_ALLOWED_URLS": " https://wiki.example.com/mcp , https://Tools.Example.org:8443,"}))
	if err != nil || c.AllowedURLs.Len() != 2 {
		t.Fatalf("allowlist %d entries, %v; want 2", c.AllowedURLs.Len(), err)
	}
	for s, want := range map[string]bool{
		"https://wiki.example.com/mcp/x":      true,
		"https://tools.example.org:8443/a":    true,
		"https://wiki.example.com/mcpx":       false,
		"https://tools.example.org/a":         false,
		"https://wiki.example.com.evil.test/": false,
	} {
		if got := c.AllowedURLs.Allows(mustServerURL(t, s)); got != want {
			t.Errorf("Allows(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestLoadRefusesAllowedURLs: a bad entry is a startup error naming the
// variable and the entry's position, never the entry.
func TestLoadRefusesAllowedURLs(t *testing.T) {
	tests := []struct {
		name, value, want string
	}{
		{"http", "http://wiki.example.com/mcp", "entry 1 is not an https URL prefix: must be https"},
		{"second entry with a query", "https://wiki.example.com/mcp, https://x.example.com/?token=s3cr3t-value", "entry 2 is not an https URL prefix: must not contain a query"},
		{"user info", "https://admin:hunter2-password@wiki.example.com/mcp", "entry 1 is not an https URL prefix: must not contain user info"},
		{"fragment", "https://wiki.example.com/mcp#frag", "entry 1 is not an https URL prefix: must not contain a fragment"},
		{"no host", "https:///mcp", "entry 1 is not an https URL prefix: must have a host"},
		{"bare host", "wiki.example.com", "entry 1 is not an https URL prefix: must be https"},
		{"wildcard", "*", "entry 1 is not an https URL prefix"},
		{"dot segment", "https://wiki.example.com/mcp/../admin", "entry 1 is not an https URL prefix: its path must not hold dot segments"},
		{"counts blanks", "https://a.example.com,,http://b.example.com", "entry 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Load(env(map[string]string{"QUAVON_MCP_ALLOWED_URLS": tt.value}))
			if err == nil {
				t.Fatalf("Load(QUAVON_MCP_ALLOWED_URLS=%q) error = nil", tt.value)
			}
			msg := err.Error()
			if !strings.Contains(msg, "QUAVON_MCP_ALLOWED_URLS must be comma-separated https URL prefixes") || !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Errorf("error = %q, want one line naming the variable and %q", msg, tt.want)
			}
			for _, part := range strings.Split(tt.value, ",") {
				if p := strings.TrimSpace(part); len(p) > 1 && strings.Contains(msg, p) {
					t.Errorf("error %q repeats the entry %q", msg, p)
				}
			}
			for _, secret := range []string{"s3cr3t", "hunter2", "example"} {
				if strings.Contains(msg, secret) {
					t.Errorf("error %q repeats %q", msg, secret)
				}
			}
		})
	}
}

func mustServerURL(t *testing.T, s string) server.URL {
	t.Helper()
	u, err := server.ParseURL(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestLoadRecheckInterval(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  time.Duration
	}{
		{"", time.Hour}, {"0", 0}, {"0s", 0}, {"10s", 10 * time.Second}, {"30m", 30 * time.Minute}, {"2h", 2 * time.Hour},
	} {
		c, err := config.Load(env(map[string]string{"QUAVON_MCP_RECHECK_INTERVAL": tt.value}))
		if err != nil || c.RecheckInterval != tt.want {
			t.Errorf("QUAVON_MCP_RECHECK_INTERVAL=%q: %v, %v; want %v", tt.value, c.RecheckInterval, err, tt.want)
		}
	}
	for _, bad := range []string{"9s", "9999ms", "1", "-1m", "hourly", " 1h", "1h "} {
		_, err := config.Load(env(map[string]string{"QUAVON_MCP_RECHECK_INTERVAL": bad}))
		if err == nil || !strings.Contains(err.Error(), "QUAVON_MCP_RECHECK_INTERVAL must be 0 (off) or a Go duration of at least 10s") {
			t.Errorf("QUAVON_MCP_RECHECK_INTERVAL=%q: error %v, want a startup error", bad, err)
		}
	}
}

// The audit stream's settings (QUAVON_AUDIT_WEBHOOK_URL and
// QUAVON_AUDIT_WEBHOOK_SECRET): both or neither, each checked, and no
// error repeats the secret.

const (
	auditURL = "https://siem.example.com/hooks/codelotse"
	// auditKey is the 32-byte key of auditSecret.
	auditKey = "0123456789abcdef0123456789abcdef"
)

var auditSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte(auditKey))

func TestLoadAuditWebhookOn(t *testing.T) {
	c, err := config.Load(env(map[string]string{"QUAVON_AUDIT_WEBHOOK_URL": auditURL, "QUAVON_AUDIT_WEBHOOK_SECRET": auditSecret}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	w := c.AuditWebhook
	if !w.On() {
		t.Fatal("On() = false with both set")
	}
	if string(w.Key) != auditKey {
		t.Errorf("Key = %q, want the decoded key %q", w.Key, auditKey)
	}
	if w.URL != mustServerURL(t, auditURL) {
		t.Errorf("URL = %v, want %s", w.URL, auditURL)
	}
}

func TestLoadAuditWebhookOff(t *testing.T) {
	for _, m := range []map[string]string{
		nil,
		{"QUAVON_AUDIT_WEBHOOK_URL": "", "QUAVON_AUDIT_WEBHOOK_SECRET": ""},
	} {
		c, err := config.Load(env(m))
		if err != nil {
			t.Fatalf("Load(%v): %v", m, err)
		}
		if c.AuditWebhook.On() || c.AuditWebhook.Key != nil {
			t.Fatalf("Load(%v): audit stream on (%+v), want off", m, c.AuditWebhook)
		}
	}
}

func TestLoadAuditWebhookRefused(t *testing.T) {
	for _, tt := range []struct {
		name, url, secret string
		want              string // the error names this variable
		notWant           string // and not this one
	}{
		{"url only", auditURL, "", "QUAVON_AUDIT_WEBHOOK_SECRET is required when QUAVON_AUDIT_WEBHOOK_URL is set", ""},
		{"secret only", "", auditSecret, "QUAVON_AUDIT_WEBHOOK_URL is required when QUAVON_AUDIT_WEBHOOK_SECRET is set", ""},
		{"bad secret only", "", "whsec_short", "QUAVON_AUDIT_WEBHOOK_URL is required", ""},
		{"http url", "http://siem.example.com/hooks/codelotse", auditSecret, "QUAVON_AUDIT_WEBHOOK_URL must be an https URL", "QUAVON_AUDIT_WEBHOOK_SECRET"},
		{"url with user info", "https://user:pass@siem.example.com/hooks", auditSecret, "QUAVON_AUDIT_WEBHOOK_URL", "QUAVON_AUDIT_WEBHOOK_SECRET"},
		{"url with query", "https://siem.example.com/hooks?token=abc", auditSecret, "QUAVON_AUDIT_WEBHOOK_URL", "QUAVON_AUDIT_WEBHOOK_SECRET"},
		{"url with fragment", "https://siem.example.com/hooks#x", auditSecret, "QUAVON_AUDIT_WEBHOOK_URL", "QUAVON_AUDIT_WEBHOOK_SECRET"},
		{"url not a url", "siem.example.com", auditSecret, "QUAVON_AUDIT_WEBHOOK_URL", "QUAVON_AUDIT_WEBHOOK_SECRET"},
		{"url whitespace only", "   ", auditSecret, "QUAVON_AUDIT_WEBHOOK_URL", "QUAVON_AUDIT_WEBHOOK_SECRET"},
		{"secret without prefix", auditURL, base64.StdEncoding.EncodeToString([]byte(auditKey)), "QUAVON_AUDIT_WEBHOOK_SECRET must be whsec_", "QUAVON_AUDIT_WEBHOOK_URL"},
		{"secret too short", auditURL, "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456")), "QUAVON_AUDIT_WEBHOOK_SECRET must be whsec_", "QUAVON_AUDIT_WEBHOOK_URL"},
		{"secret too long", auditURL, "whsec_" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 65))), "QUAVON_AUDIT_WEBHOOK_SECRET", "QUAVON_AUDIT_WEBHOOK_URL"},
		{"secret not base64", auditURL, "whsec_" + strings.Repeat("%", 44), "QUAVON_AUDIT_WEBHOOK_SECRET", "QUAVON_AUDIT_WEBHOOK_URL"},
		{"secret with a leading space", auditURL, " " + auditSecret, "QUAVON_AUDIT_WEBHOOK_SECRET", "QUAVON_AUDIT_WEBHOOK_URL"},
		{"secret whitespace only", auditURL, "   ", "QUAVON_AUDIT_WEBHOOK_SECRET", "QUAVON_AUDIT_WEBHOOK_URL"},
		{"both wrong", "http://siem.example.com/", "whsec_" + strings.Repeat("%", 44), "QUAVON_AUDIT_WEBHOOK_URL must be an https URL", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(env(map[string]string{"QUAVON_AUDIT_WEBHOOK_URL": tt.url, "QUAVON_AUDIT_WEBHOOK_SECRET": tt.secret}))
			if err == nil {
				t.Fatalf("Load = nil error, want one naming %q", tt.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Errorf("error = %q, want one line containing %q", msg, tt.want)
			}
			if tt.notWant != "" && strings.Contains(msg, tt.notWant) {
				t.Errorf("error = %q also blames %s", msg, tt.notWant)
			}
			wantErrs := 1
			if tt.name == "both wrong" {
				wantErrs = 2
			}
			if errs, ok := err.(config.Errors); !ok || len(errs) != wantErrs {
				t.Errorf("error = %#v, want %d config errors (one per wrong setting)", err, wantErrs)
			}
			if s := strings.TrimSpace(tt.secret); s != "" {
				for _, leak := range []string{s, strings.TrimPrefix(s, "whsec_"), auditKey} {
					if strings.Contains(msg, leak) {
						t.Errorf("error %q repeats the secret", msg)
					}
				}
			}
			if strings.Contains(msg, "pass") || strings.Contains(msg, "token=abc") {
				t.Errorf("error %q repeats the URL's credentials", msg)
			}
			if c.AuditWebhook.On() || c.AuditWebhook.Key != nil {
				t.Errorf("audit stream on (%+v) after an error, want off", c.AuditWebhook)
			}
		})
	}
}

// Keys the documented commands print (docs/configuration.md): `openssl
// genpkey -algorithm ed25519 | openssl pkcs8 -topk8 -nocrypt -outform DER
// | base64 -w0`, and the same with `-algorithm EC -pkeyopt
// ec_paramgen_curve:P-256`. Test keys, published nowhere else.
const (
	opensslEd25519 = "MC4CAQAwBQYDK2VwBCIEIB/ze7Oyfb+oajwCw2fSaCkqf2nRB8vXB00S5YMGSvRx"
	opensslP256    = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg66MWa1qpQB1DVEici0GW1hip7uY9sr8qzmABqDUxWwChRANCAAQ2lQpifHhoYeW+zHAnKKhsy53fwsSYb4RsRfBwMgLaA+CvJxY/bFOwgo9ovQHxUsWR3/CUgpzi7acQGfwdV2kW"
)

func pkcs8(t *testing.T, key any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func ecKey(t *testing.T, c elliptic.Curve) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestLoadOAuthSigningKeys(t *testing.T) {
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ec := ecKey(t, elliptic.P256())
	b64 := base64.StdEncoding.EncodeToString
	c, err := config.Load(env(map[string]string{
		"QUAVON_OAUTH_SIGNING_KEYS": " ed1:" + b64(pkcs8(t, edKey)) + " , ec1:" + b64(pkcs8(t, ec)) + ",ossl:" + opensslEd25519 + ",osslec:" + opensslP256,
	}))
	if err != nil {
		t.Fatalf("Load error = %v", err)
	}
	keys := c.OAuthSigningKeys
	if len(keys) != 4 || keys[0].ID != "ed1" || keys[1].ID != "ec1" || keys[2].ID != "ossl" || keys[3].ID != "osslec" {
		t.Fatalf("OAuthSigningKeys = %+v, want ed1, ec1, ossl, osslec in order", keys)
	}
	if k, ok := keys[0].Key.(ed25519.PrivateKey); !ok || !k.Equal(edKey) {
		t.Errorf("key ed1 = %T, want the Ed25519 key given", keys[0].Key)
	}
	if k, ok := keys[1].Key.(*ecdsa.PrivateKey); !ok || !k.Equal(ec) {
		t.Errorf("key ec1 = %T, want the P-256 key given", keys[1].Key)
	}
	if _, ok := keys[2].Key.(ed25519.PrivateKey); !ok {
		t.Errorf("key ossl = %T, want Ed25519", keys[2].Key)
	}
	if k, ok := keys[3].Key.(*ecdsa.PrivateKey); !ok || k.Curve != elliptic.P256() {
		t.Errorf("key osslec = %T, want ECDSA on P-256", keys[3].Key)
	}

	for _, unset := range []string{"", " ", "\t"} {
		c, err := config.Load(env(map[string]string{"QUAVON_OAUTH_SIGNING_KEYS": unset}))
		if err != nil || c.OAuthSigningKeys != nil {
			t.Errorf("Load(QUAVON_OAUTH_SIGNING_KEYS=%q) = %v, %v; want no keys and no error", unset, c.OAuthSigningKeys, err)
		}
	}
}

// TestLoadRefusesOAuthSigningKeys: every malformed ring is a one-line
// startup error naming the variable and the entry's position, and never
// a part of an entry's key.
func TestLoadRefusesOAuthSigningKeys(t *testing.T) {
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	x25519, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p256 := ecKey(t, elliptic.P256())
	// A P-256 key whose base64url spelling differs from its standard one
	// (it has a '-' or '_'): a random key's may by chance not.
	urlSafe := base64.URLEncoding.EncodeToString(pkcs8(t, p256))
	for !strings.ContainsAny(urlSafe, "-_") {
		urlSafe = base64.URLEncoding.EncodeToString(pkcs8(t, ecKey(t, elliptic.P256())))
	}
	p384 := ecKey(t, elliptic.P384())
	if !strings.HasSuffix(base64.StdEncoding.EncodeToString(pkcs8(t, p384)), "=") {
		t.Fatal("a P-384 key's base64 has no padding to leave out")
	}
	sec1, err := x509.MarshalECPrivateKey(p256)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(p256.Public())
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	good := b64(pkcs8(t, edKey))
	tests := []struct {
		name, value, want string
		// key is the material that must not appear in the error.
		key string
	}{
		{"no id", good, "entry 1 must be ID:BASE64", good},
		{"empty id", ":" + good, "entry 1 must be ID:BASE64", good},
		{"id uppercase", "K1:" + good, "entry 1 must be ID:BASE64", good},
		{"id too long", "abcdefghijklmnopq:" + good, "entry 1 must be ID:BASE64", good},
		{"id with a dash", "k-1:" + good, "entry 1 must be ID:BASE64", good},
		{"repeated id", "k1:" + good + ",k1:" + b64(pkcs8(t, p256)), "entry 2 repeats a key id", good},
		{"empty entry last", "k1:" + good + ",", "entry 2 must be ID:BASE64", good},
		{"empty entry between", "k1:" + good + ",,k2:" + good, "entry 2 must be ID:BASE64", good},
		{"empty key", "k1:", "entry 1 must be a PKCS#8 private key", ""},
		{"not base64", "k1:%%" + good[2:], "entry 1 must be a PKCS#8 private key", good[2:]},
		{"url-safe base64", "k1:" + urlSafe, "entry 1 must be a PKCS#8 private key", urlSafe},
		// A P-384 key's PKCS#8 is 185 bytes, so its base64 ends in "=".
		{"unpadded base64", "k1:" + strings.TrimRight(b64(pkcs8(t, p384)), "="), "entry 1 must be a PKCS#8 private key", b64(pkcs8(t, p384))},
		{"space inside", "k1: " + good, "entry 1 must be a PKCS#8 private key", good},
		{"not DER", "k1:" + b64([]byte("0123456789abcdef0123456789abcdef")), "entry 1 must be a PKCS#8 private key", b64([]byte("0123456789abcdef0123456789abcdef"))},
		{"SEC 1 EC key", "k1:" + b64(sec1), "entry 1 must be a PKCS#8 private key", b64(sec1)},
		{"public key", "k1:" + b64(pub), "entry 1 must be a PKCS#8 private key", b64(pub)},
		{"trailing bytes", "k1:" + b64(append(pkcs8(t, edKey), 0, 0)), "entry 1 must be a PKCS#8 private key", good},
		{"RSA key", "k1:" + b64(pkcs8(t, rsaKey)), "entry 1 must be an ECDSA P-256 (ES256) or Ed25519 key", b64(pkcs8(t, rsaKey))},
		{"P-384 key", "k1:" + b64(pkcs8(t, p384)), "entry 1 must be an ECDSA P-256 (ES256) or Ed25519 key", b64(pkcs8(t, p384))},
		{"P-521 key", "k1:" + b64(pkcs8(t, ecKey(t, elliptic.P521()))), "entry 1 must be an ECDSA P-256 (ES256) or Ed25519 key", ""},
		{"P-224 key", "k1:" + b64(pkcs8(t, ecKey(t, elliptic.P224()))), "entry 1 must be an ECDSA P-256 (ES256) or Ed25519 key", ""},
		{"X25519 key", "k1:" + b64(pkcs8(t, x25519)), "entry 1 must be an ECDSA P-256 (ES256) or Ed25519 key", b64(pkcs8(t, x25519))},
		{"second entry RSA", "k1:" + good + ",k2:" + b64(pkcs8(t, rsaKey)), "entry 2 must be an ECDSA P-256 (ES256) or Ed25519 key", good},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Load(env(map[string]string{"QUAVON_OAUTH_SIGNING_KEYS": tt.value}))
			if err == nil {
				t.Fatalf("Load(QUAVON_OAUTH_SIGNING_KEYS) error = nil, keys %d; want %q", len(c.OAuthSigningKeys), tt.want)
			}
			msg := err.Error()
			want := "configuration: QUAVON_OAUTH_SIGNING_KEYS " + tt.want
			if !strings.HasPrefix(msg, want) || strings.Contains(msg, "\n") {
				t.Errorf("error = %q, want one line starting %q", msg, want)
			}
			if c.OAuthSigningKeys != nil {
				t.Errorf("OAuthSigningKeys = %d keys, want none with the error", len(c.OAuthSigningKeys))
			}
			// No part of the value or the key: no 8 characters of either in a row.
			for _, secret := range []string{tt.value, tt.key} {
				for i := 0; i+8 <= len(secret); i++ {
					if part := secret[i : i+8]; strings.Contains(msg, part) {
						t.Fatalf("error %q repeats %q, a part of the entry", msg, part)
					}
				}
			}
		})
	}
}
