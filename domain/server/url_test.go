package server_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
)

func TestParseURL(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", limits.MaxURLLen-len("https://example.com/"))
	tests := []struct {
		name   string
		in     string
		want   string // "" when an error is expected
		reason string
		host   string
		port   int
		origin string
		ip     bool
	}{
		{name: "plain", in: "https://wiki.example.com/mcp", want: "https://wiki.example.com/mcp", host: "wiki.example.com", port: 443, origin: "https://wiki.example.com"},
		{name: "no path", in: "https://example.com", want: "https://example.com", host: "example.com", port: 443, origin: "https://example.com"},
		{name: "scheme and host case", in: "HTTPS://Wiki.EXAMPLE.com/MCP", want: "https://wiki.example.com/MCP", host: "wiki.example.com", port: 443, origin: "https://wiki.example.com"},
		{name: "explicit port", in: "https://example.com:8443/mcp", want: "https://example.com:8443/mcp", host: "example.com", port: 8443, origin: "https://example.com:8443"},
		{name: "default port dropped", in: "https://example.com:443/mcp", want: "https://example.com/mcp", host: "example.com", port: 443, origin: "https://example.com"},
		{name: "port 1", in: "https://example.com:1/", want: "https://example.com:1/", host: "example.com", port: 1, origin: "https://example.com:1"},
		{name: "port 65535", in: "https://example.com:65535/", want: "https://example.com:65535/", host: "example.com", port: 65535, origin: "https://example.com:65535"},
		{name: "trailing dot", in: "https://example.com./x", want: "https://example.com/x", host: "example.com", port: 443, origin: "https://example.com"},
		{name: "idn", in: "https://bücher.example/mcp", want: "https://xn--bcher-kva.example/mcp", host: "xn--bcher-kva.example", port: 443, origin: "https://xn--bcher-kva.example"},
		{name: "punycode upper", in: "https://XN--BCHER-KVA.example/", want: "https://xn--bcher-kva.example/", host: "xn--bcher-kva.example", port: 443, origin: "https://xn--bcher-kva.example"},
		{name: "ideographic dots", in: "https://wiki。example。com/", want: "https://wiki.example.com/", host: "wiki.example.com", port: 443, origin: "https://wiki.example.com"},
		{name: "ipv4", in: "https://203.0.113.7/mcp", want: "https://203.0.113.7/mcp", host: "203.0.113.7", port: 443, origin: "https://203.0.113.7", ip: true},
		{name: "ipv6", in: "https://[2001:DB8:0:0::1]:8443/mcp", want: "https://[2001:db8::1]:8443/mcp", host: "2001:db8::1", port: 8443, origin: "https://[2001:db8::1]:8443", ip: true},
		{name: "ipv4 mapped ipv6", in: "https://[::ffff:7f00:1]/", want: "https://[::ffff:127.0.0.1]/", host: "::ffff:127.0.0.1", port: 443, origin: "https://[::ffff:127.0.0.1]", ip: true},
		{name: "path characters", in: "https://example.com/a/b;c=d/%2F/~x@y:z", want: "https://example.com/a/b;c=d/%2F/~x@y:z", host: "example.com", port: 443, origin: "https://example.com"},
		{name: "at max length", in: long, want: long, host: "example.com", port: 443, origin: "https://example.com"},

		{name: "http", in: "http://example.com/", reason: "must be https"},
		{name: "ftp", in: "ftp://example.com/", reason: "must be https"},
		{name: "no scheme", in: "example.com/mcp", reason: "must be https"},
		{name: "opaque", in: "https:example.com", reason: "must be https"},
		{name: "one slash", in: "https:/example.com", reason: "must be https"},
		{name: "empty", in: "", reason: "must be https"},
		{name: "javascript", in: "javascript://example.com/%0aalert(1)", reason: "must be https"},
		{name: "file", in: "file:///etc/passwd", reason: "must be https"},
		{name: "user info", in: "https://user:pass@example.com/", reason: "must not contain user info"},
		{name: "empty user info", in: "https://@example.com/", reason: "must not contain user info"},
		{name: "user only", in: "https://token@example.com/", reason: "must not contain user info"},
		{name: "at confusion", in: "https://example.com@evil.example/", reason: "must not contain user info"},
		{name: "backslash confusion", in: "https://evil.example\\@example.com/", reason: "must not contain user info"},
		{name: "query", in: "https://example.com/mcp?a=b", reason: "must not contain a query"},
		{name: "bare query", in: "https://example.com/mcp?", reason: "must not contain a query"},
		{name: "query in host", in: "https://example.com?x", reason: "must not contain a query"},
		{name: "fragment", in: "https://example.com/mcp#x", reason: "must not contain a fragment"},
		{name: "bare fragment", in: "https://example.com/mcp#", reason: "must not contain a fragment"},
		{name: "no host", in: "https:///mcp", reason: "must have a host"},
		{name: "no host at all", in: "https://", reason: "must have a host"},
		{name: "port only", in: "https://:443/", reason: "must have a host"},
		{name: "empty port", in: "https://example.com:/", reason: "must have a port between 1 and 65535"},
		{name: "port 0", in: "https://example.com:0/", reason: "must have a port between 1 and 65535"},
		{name: "port too big", in: "https://example.com:65536/", reason: "must have a port between 1 and 65535"},
		{name: "port leading zero", in: "https://example.com:0443/", reason: "must have a port between 1 and 65535"},
		{name: "port sign", in: "https://example.com:+443/", reason: "must have a port between 1 and 65535"},
		{name: "port huge", in: "https://example.com:99999999999999999999/", reason: "must have a port between 1 and 65535"},
		{name: "two ports", in: "https://example.com:1:2/", reason: "must have a port between 1 and 65535"},
		{name: "decimal ip", in: "https://2130706433/", reason: "must not use an ambiguous numeric host"},
		{name: "hex ip", in: "https://0x7f.1/", reason: "must not use an ambiguous numeric host"},
		{name: "hex ip full", in: "https://0x7f000001/", reason: "must not use an ambiguous numeric host"},
		{name: "octal ip", in: "https://017.0.0.1/", reason: "must not use an ambiguous numeric host"},
		{name: "short ip", in: "https://127.1/", reason: "must not use an ambiguous numeric host"},
		{name: "ip with trailing dot", in: "https://127.0.0.1./", want: "https://127.0.0.1/", host: "127.0.0.1", port: 443, origin: "https://127.0.0.1", ip: true},
		{name: "hex last label", in: "https://a.0x/", reason: "must not use an ambiguous numeric host"},
		{name: "numeric tld", in: "https://example.123/", reason: "must not use an ambiguous numeric host"},
		{name: "ip too many parts", in: "https://1.2.3.4.5/", reason: "must not use an ambiguous numeric host"},
		{name: "ip out of range", in: "https://256.0.0.1/", reason: "must not use an ambiguous numeric host"},
		{name: "fullwidth ip", in: "https://１２７.０.０.１/", want: "https://127.0.0.1/", host: "127.0.0.1", port: 443, origin: "https://127.0.0.1", ip: true},
		{name: "fullwidth decimal ip", in: "https://２１３０７０６４３３/", reason: "must not use an ambiguous numeric host"},
		{name: "zone", in: "https://[fe80::1%25eth0]/", reason: "must not contain an IPv6 zone"},
		{name: "raw zone", in: "https://[fe80::1%eth0]/", reason: "must not contain an IPv6 zone"},
		{name: "unbracketed ipv6", in: "https://::1/", reason: "must have a host"},
		{name: "unclosed bracket", in: "https://[::1/", reason: "must have a valid host"},
		{name: "bracket junk", in: "https://[::1]x/", reason: "must have a valid host"},
		{name: "bracketed ipv4", in: "https://[127.0.0.1]/", reason: "must have a valid host"},
		{name: "bracket in host", in: "https://a[b]/", reason: "must have a valid host"},
		{name: "bad ipv6", in: "https://[::g]/", reason: "must have a valid host"},
		{name: "underscore host", in: "https://a_b.example/", reason: "must have a valid host"},
		{name: "percent host", in: "https://%65xample.com/", reason: "must have a valid host"},
		{name: "backslash host", in: "https://example.com\\.evil/", reason: "must have a valid host"},
		{name: "bad punycode", in: "https://xn--zz.example/", reason: "must have a valid host"},
		{name: "empty label", in: "https://a..b/", reason: "must have a valid host"},
		{name: "only dot", in: "https://./", reason: "must have a valid host"},
		{name: "double trailing dot", in: "https://example.com../", reason: "must have a valid host"},
		{name: "zero width joiner", in: "https://a\u200db.example/", reason: "must have a valid host"},
		{name: "label too long", in: "https://" + strings.Repeat("a", 64) + ".example/", reason: "must have a valid host"},
		{name: "space", in: "https://example.com/a b", reason: "must not contain spaces or control characters"},
		{name: "crlf", in: "https://example.com/\r\nHost: evil", reason: "must not contain spaces or control characters"},
		{name: "nul", in: "https://example.com\x00.evil/", reason: "must not contain spaces or control characters"},
		{name: "tab", in: "https://exa\tmple.com/", reason: "must not contain spaces or control characters"},
		{name: "invalid utf8", in: "https://example.com/\xff", reason: "must not contain spaces or control characters"},
		{name: "nbsp", in: "https://example.com/\u00a0", reason: "must not contain spaces or control characters"},
		{name: "unicode path", in: "https://example.com/ü", reason: "must have a valid path"},
		{name: "bad escape", in: "https://example.com/%zz", reason: "must have a valid path"},
		{name: "short escape", in: "https://example.com/%2", reason: "must have a valid path"},
		{name: "backslash path", in: "https://example.com/a\\b", reason: "must have a valid path"},
		{name: "quote path", in: "https://example.com/\"", reason: "must have a valid path"},
		{name: "too long", in: long + "a", reason: "must be at most 2048 characters"},
		{name: "too long after punycode", in: "https://" + strings.Repeat("ü", 20) + ".example/" + strings.Repeat("a", limits.MaxURLLen-40), reason: "must be at most 2048 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := server.ParseURL(tt.in)
			if tt.want == "" {
				var fe *field.Error
				if !errors.As(err, &fe) || fe.Field != "url" || fe.Reason != tt.reason {
					t.Fatalf("ParseURL(%q) = %v, want url: %s", tt.in, err, tt.reason)
				}
				if strings.Contains(err.Error(), "example") || strings.Contains(err.Error(), "evil") {
					t.Errorf("ParseURL(%q) error %q echoes the URL", tt.in, err)
				}
				if !got.IsZero() || got.String() != "" {
					t.Errorf("ParseURL(%q) returned non-zero URL %q with an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseURL(%q) = %v, want %q", tt.in, err, tt.want)
			}
			if got.String() != tt.want || got.Host() != tt.host || got.Port() != tt.port || got.Origin() != tt.origin || got.IsIPLiteral() != tt.ip {
				t.Errorf("ParseURL(%q) = %q host %q port %d origin %q ip %v, want %q host %q port %d origin %q ip %v",
					tt.in, got, got.Host(), got.Port(), got.Origin(), got.IsIPLiteral(), tt.want, tt.host, tt.port, tt.origin, tt.ip)
			}
			if !strings.HasSuffix(got.String(), got.Path()) || !strings.HasPrefix(got.String(), got.Origin()) {
				t.Errorf("ParseURL(%q): Origin %q + Path %q != %q", tt.in, got.Origin(), got.Path(), got)
			}
		})
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"https://wiki.example.com/mcp", "HTTPS://Example.COM:443/a", "https://[::1]:8443/",
		"https://bücher.example/", "https://127.0.0.1/", "https://2130706433/", "https://0x7f.1/",
		"https://@example.com/", "https://example.com/?", "https://example.com/#", "https://[fe80::1%25x]/",
		"https://example.com./", "https://１２７.０.０.１/", "https://a.b:65535/%2F", "http://example.com/",
		"https://xn--bcher-kva.example/", "https://[::ffff:10.0.0.1]/", "https://example.com:0/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := server.ParseURL(s)
		if err != nil {
			return
		}
		out := u.String()
		again, err := server.ParseURL(out)
		if err != nil || again != u || again.String() != out {
			t.Fatalf("ParseURL(%q) = %q, re-parse = %q, %v", s, out, again, err)
		}
		if !strings.HasPrefix(out, "https://") {
			t.Fatalf("ParseURL(%q) = %q, not https", s, out)
		}
		authority, _, _ := strings.Cut(out[len("https://"):], "/")
		if strings.ContainsAny(authority, "@") || strings.ContainsAny(out, "?#") {
			t.Fatalf("ParseURL(%q) = %q has user info, query or fragment", s, out)
		}
		if utf8.RuneCountInString(out) > limits.MaxURLLen || utf8.RuneCountInString(s) > limits.MaxURLLen {
			t.Fatalf("ParseURL(%q) = %q is too long", s, out)
		}
		if u.Host() == "" || strings.ContainsAny(u.Host(), "%/\\ ") {
			t.Fatalf("ParseURL(%q) host %q", s, u.Host())
		}
	})
}
