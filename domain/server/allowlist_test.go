package server_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/server"
)

func mustAllowed(t testing.TB, raw string) server.AllowedURLs {
	t.Helper()
	a, err := server.ParseAllowedURLs(raw)
	if err != nil {
		t.Fatalf("ParseAllowedURLs(%q) = %v", raw, err)
	}
	return a
}

// TestAllowedURLsHostileTable: the matcher against the URLs an attacker
// registers to pass for an allowed one. Each URL that does not parse is
// refused at registration anyway (ParseURL); the table says so, so a
// change of ParseURL that let one through would show here.
func TestAllowedURLsHostileTable(t *testing.T) {
	list := mustAllowed(t, "https://wiki.example.com/mcp, https://tools.example.org:8443, https://bücher.example/api/, https://[2001:db8::1]/mcp, https://docs.example.net/sp%c3%a9cial")
	tests := []struct {
		name  string
		url   string
		allow bool
		// unparsable: ParseURL refuses it, so it is never a server URL.
		unparsable bool
	}{
		{name: "the entry itself", url: "https://wiki.example.com/mcp", allow: true},
		{name: "below the entry", url: "https://wiki.example.com/mcp/x", allow: true},
		{name: "below, trailing slash", url: "https://wiki.example.com/mcp/", allow: true},
		{name: "host case", url: "https://WIKI.Example.COM/mcp", allow: true},
		{name: "host trailing dot", url: "https://wiki.example.com./mcp", allow: true},
		{name: "explicit default port", url: "https://wiki.example.com:443/mcp/y", allow: true},
		{name: "escape case", url: "https://wiki.example.com/mcp/a%2fb", allow: false}, // an encoded slash: never
		{name: "whole origin with port", url: "https://tools.example.org:8443/anything/at/all", allow: true},
		{name: "whole origin, no path", url: "https://tools.example.org:8443", allow: true},
		{name: "idn as punycode", url: "https://xn--bcher-kva.example/api/v1", allow: true},
		{name: "idn as unicode", url: "https://BÜCHER.example/api", allow: true},
		{name: "trailing slash entry allows the bare path", url: "https://bücher.example/api", allow: true},
		{name: "ipv6 written long", url: "https://[2001:DB8:0::1]:443/mcp", allow: true},
		{name: "escape hex case", url: "https://docs.example.net/sp%C3%A9cial/x", allow: true},
		{name: "escape decoded", url: "https://docs.example.net/spécial", unparsable: true},

		{name: "sibling path with the prefix's letters", url: "https://wiki.example.com/mcpx"},
		{name: "sibling path, dash", url: "https://wiki.example.com/mcp-admin/x"},
		{name: "parent path", url: "https://wiki.example.com/"},
		{name: "no path", url: "https://wiki.example.com"},
		{name: "path case", url: "https://wiki.example.com/MCP"},
		{name: "escaped letter", url: "https://wiki.example.com/%6dcp"},
		{name: "dot dot out of the prefix", url: "https://wiki.example.com/mcp/../admin"},
		{name: "encoded dot dot", url: "https://wiki.example.com/mcp/%2e%2E/admin"},
		{name: "half encoded dot dot", url: "https://wiki.example.com/mcp/.%2e/admin"},
		{name: "dot dot with a parameter", url: "https://wiki.example.com/mcp/..;/admin"},
		{name: "single dot", url: "https://wiki.example.com/mcp/./x"},
		{name: "encoded slash and dots", url: "https://wiki.example.com/mcp/a%2F..%2F..%2Fadmin"},
		{name: "encoded backslash and dots", url: "https://wiki.example.com/mcp/a%5c..%5cadmin"},
		{name: "double escape", url: "https://wiki.example.com/mcp/%252e%252e/admin"},
		{name: "encoded NUL", url: "https://wiki.example.com/mcp/x%00y"},
		{name: "suffix host", url: "https://wiki.example.com.evil.test/mcp"},
		{name: "prefix host", url: "https://evilwiki.example.com/mcp"},
		{name: "subdomain", url: "https://a.wiki.example.com/mcp"},
		{name: "parent domain", url: "https://example.com/mcp"},
		{name: "confusable letter", url: "https://wikі.example.com/mcp"}, // Cyrillic і
		{name: "other port", url: "https://wiki.example.com:8443/mcp"},
		{name: "entry's port left out", url: "https://tools.example.org/x"},
		{name: "other port on the origin entry", url: "https://tools.example.org:8444/x"},
		{name: "ipv4-mapped form of nothing listed", url: "https://[::ffff:192.0.2.1]/mcp"},
		{name: "ipv6 neighbour", url: "https://[2001:db8::2]/mcp"},
		{name: "entry in the query", url: "https://evil.test/?u=https://wiki.example.com/mcp", unparsable: true},
		{name: "entry in the path", url: "https://evil.test/https://wiki.example.com/mcp"},
		{name: "entry in the fragment", url: "https://evil.test/#https://wiki.example.com/mcp", unparsable: true},
		{name: "entry as user info", url: "https://wiki.example.com@evil.test/mcp", unparsable: true},
		{name: "user info before the entry's host", url: "https://user@wiki.example.com/mcp", unparsable: true},
		{name: "empty user info", url: "https://@wiki.example.com/mcp", unparsable: true},
		{name: "http", url: "http://wiki.example.com/mcp", unparsable: true},
		{name: "other scheme", url: "wss://wiki.example.com/mcp", unparsable: true},
		{name: "backslash authority", url: "https://evil.test\\@wiki.example.com/mcp", unparsable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := server.ParseURL(tt.url)
			if tt.unparsable {
				if err == nil {
					t.Fatalf("ParseURL(%q) accepted it (%s): judge it here", tt.url, u)
				}
				if list.Allows(u) {
					t.Errorf("Allows(zero URL) = true")
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseURL(%q) = %v", tt.url, err)
			}
			if got := list.Allows(u); got != tt.allow {
				t.Errorf("Allows(%q) = %v, want %v", tt.url, got, tt.allow)
			}
			err = list.Check(u)
			var fe *field.Error
			switch {
			case tt.allow && err != nil:
				t.Errorf("Check(%q) = %v, want nil", tt.url, err)
			case !tt.allow && (!errors.As(err, &fe) || fe.Field != "url" || fe.Reason != server.OutsideAllowlistReason):
				t.Errorf("Check(%q) = %v, want the url field error", tt.url, err)
			}
		})
	}
}

func TestAllowedURLsEmptyAllowsAny(t *testing.T) {
	for _, raw := range []string{"", " ", " , ,"} {
		a := mustAllowed(t, raw)
		if a.Len() != 0 {
			t.Errorf("ParseAllowedURLs(%q).Len() = %d", raw, a.Len())
		}
		for _, s := range []string{"https://evil.test/x", "https://203.0.113.7:8443/..", "https://wiki.example.com/mcp"} {
			if !a.Allows(mustURL(t, s)) {
				t.Errorf("empty list refuses %q", s)
			}
		}
		if a.Allows(server.URL{}) {
			t.Errorf("empty list allows the zero URL")
		}
	}
	var zero server.AllowedURLs
	if !zero.Allows(mustURL(t, "https://anything.example/")) {
		t.Errorf("the zero AllowedURLs refuses a URL")
	}
}

func TestAllowedURLsRootEntry(t *testing.T) {
	a := mustAllowed(t, "https://wiki.example.com/")
	for _, s := range []string{"https://wiki.example.com", "https://wiki.example.com/", "https://wiki.example.com/mcp/x"} {
		if !a.Allows(mustURL(t, s)) {
			t.Errorf("origin entry refuses %q", s)
		}
	}
	if a.Allows(mustURL(t, "https://wiki.example.com/a/../b")) {
		t.Errorf("a dot segment passes an origin entry")
	}
}

func TestParseAllowedURLsRefusesEntries(t *testing.T) {
	const secretish = "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@wiki.example.com/mcp"
	tests := []struct {
		name, raw string
		entry     int
	}{
		{"http", "http://wiki.example.com/mcp", 1},
		{"no scheme", "wiki.example.com/mcp", 1},
		{"second entry", "https://ok.example.com, ftp://x.example.com", 2},
		{"position counts blanks", "https://ok.example.com,,https://a.example.com?x=1", 3},
		{"query", "https://wiki.example.com/mcp?token=1", 1},
		{"bare query", "https://wiki.example.com/mcp?", 1},
		{"fragment", "https://wiki.example.com/mcp#x", 1},
		{"user info", secretish, 1},
		{"no host", "https:///mcp", 1},
		{"bad port", "https://wiki.example.com:0/mcp", 1},
		{"wildcard host", "https://*.example.com/", 1},
		{"dot segment", "https://wiki.example.com/mcp/../admin", 1},
		{"encoded dot segment", "https://wiki.example.com/%2e%2e", 1},
		{"encoded slash", "https://wiki.example.com/a%2Fb", 1},
		{"empty segment", "https://wiki.example.com//mcp", 1},
		{"double trailing slash", "https://wiki.example.com/mcp//", 1},
		{"ambiguous numeric host", "https://0x7f.1/", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := server.ParseAllowedURLs(tt.raw)
			var ae *server.AllowedURLError
			if !errors.As(err, &ae) || ae.Entry != tt.entry {
				t.Fatalf("ParseAllowedURLs(%q) = %v, %v; want an error on entry %d", tt.raw, a, err, tt.entry)
			}
			if !strings.HasPrefix(err.Error(), "entry ") || strings.Contains(err.Error(), "example") || strings.Contains(err.Error(), "ghp_") {
				t.Errorf("error %q repeats the entry or does not name its position", err)
			}
			if a.Len() != 0 {
				t.Errorf("a refused list has %d entries", a.Len())
			}
		})
	}
}

func TestStatusUnderTheAllowlist(t *testing.T) {
	s := newServer(t, server.NoCredential(), 0) // https://wiki.example.com/mcp, never discovered
	if got := s.StatusUnder(server.AllowedURLs{}, t1); got != server.StatusNeverDiscovered {
		t.Errorf("StatusUnder(empty) = %q, want the plain status", got)
	}
	if got := s.StatusUnder(mustAllowed(t, "https://wiki.example.com/mcp"), t1); got != server.StatusNeverDiscovered {
		t.Errorf("StatusUnder(allowed) = %q, want the plain status", got)
	}
	if _, err := s.Apply(server.Patch{Enabled: ptr(false)}, t1); err != nil {
		t.Fatal(err)
	}
	if got := s.StatusUnder(mustAllowed(t, "https://tools.example.org"), t1); got != server.StatusOutsideAllowlist {
		t.Errorf("StatusUnder(outside, disabled) = %q, want outside_allowlist before disabled", got)
	}
	if server.Statuses[0] != server.StatusOutsideAllowlist {
		t.Errorf("Statuses = %v, want outside_allowlist first", server.Statuses)
	}
}

// FuzzAllowedURLs: whatever the list and the URL, an allowed URL has an
// entry's host and port and lies under its path on a segment boundary,
// every entry allows itself, the answer survives a round trip of the URL
// through its normalised form, and an empty list allows every URL.
func FuzzAllowedURLs(f *testing.F) {
	for _, seed := range [][2]string{
		{"https://wiki.example.com/mcp", "https://wiki.example.com/mcp/x"},
		{"https://wiki.example.com/mcp", "https://wiki.example.com/mcpx"},
		{"https://wiki.example.com/mcp", "https://wiki.example.com.evil.test/mcp"},
		{"https://wiki.example.com/mcp/", "https://wiki.example.com/mcp/%2e%2e/x"},
		{"https://bücher.example, https://[::1]:8443/a", "https://xn--bcher-kva.example:443/"},
		{"", "https://evil.test/"},
		{"https://a.example/b;c", "https://a.example/b;c/..;/d"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, raw, rawURL string) {
		list, err := server.ParseAllowedURLs(raw)
		if err != nil {
			return
		}
		var entries []server.URL
		for _, part := range strings.Split(raw, ",") {
			if s := strings.TrimSpace(part); s != "" {
				e, err := server.ParseURL(s)
				if err != nil {
					t.Fatalf("ParseAllowedURLs accepted %q, which ParseURL refuses: %v", s, err)
				}
				entries = append(entries, e)
			}
		}
		if list.Len() != len(entries) {
			t.Fatalf("Len() = %d, want %d", list.Len(), len(entries))
		}
		for _, e := range entries {
			if !list.Allows(e) {
				t.Fatalf("entry %q does not allow itself", e)
			}
		}
		u, err := server.ParseURL(rawURL)
		if err != nil {
			if list.Allows(u) {
				t.Fatalf("the zero URL is allowed")
			}
			return
		}
		allowed := list.Allows(u)
		if len(entries) == 0 && !allowed {
			t.Fatalf("an empty list refuses %q", u)
		}
		if again, err := server.ParseURL(u.String()); err != nil || list.Allows(again) != allowed {
			t.Fatalf("%q round trips to %v, %v", u, again, err)
		}
		if !allowed || len(entries) == 0 {
			return
		}
		for _, e := range entries {
			if e.Host() == u.Host() && e.Port() == u.Port() && underEntry(u.Path(), e.Path()) {
				return
			}
		}
		t.Fatalf("%q is allowed by %q, but no entry has its host and port with its path below", u, raw)
	})
}

// underEntry is the segment rule restated for the fuzz target: the
// path is the entry's (trailing slash aside) or below it, escapes
// compared in upper case.
func underEntry(path, entry string) bool {
	path, entry = strings.ToUpper(path), strings.ToUpper(strings.TrimSuffix(entry, "/"))
	if path == entry {
		return true
	}
	return strings.HasPrefix(path, entry+"/")
}
