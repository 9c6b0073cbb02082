package server

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/netpolicy"
)

const defaultPort = 443

// URL is a validated, normalised MCP server endpoint: https, a host, an
// optional port and path, nothing else. Two URLs for the same endpoint
// have the same String, so comparing them compares endpoints.
type URL struct {
	host string // normalised, IPv6 without brackets
	port int    // 0: the default port, never written
	path string
	ip   bool
}

func urlError(reason string) error { return &field.Error{Field: "url", Reason: reason} }

// ParseURL validates and normalises a server URL (MC1):
//
//   - the scheme is https (any case);
//   - no user info (even an empty one, https://@host), no query (even a
//     bare ?), no fragment (even a bare #);
//   - at most limits.MaxURLLen characters, before and after normalisation;
//   - a host is required; domain names are converted to lowercase ASCII
//     (punycode) with a strict IDNA profile and lose a trailing dot; IPv4
//     must be canonical dotted-quad and IPv6 bracketed without a zone;
//     other numeric hosts are refused (see [netpolicy.ErrAmbiguousHost]);
//   - an explicit port is 1–65535 without leading zeros; :443 is dropped;
//   - the path holds only RFC 3986 path characters and valid %XX escapes;
//     it is kept as given.
//
// Errors are [*field.Error] with Field "url" and never contain the input.
func ParseURL(s string) (URL, error) {
	if utf8.RuneCountInString(s) > limits.MaxURLLen {
		return URL{}, urlError(fmt.Sprintf("must be at most %d characters", limits.MaxURLLen))
	}
	if !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0 {
		return URL{}, urlError("must not contain spaces or control characters")
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok || !strings.EqualFold(scheme, "https") {
		return URL{}, urlError("must be https")
	}
	if strings.Contains(rest, "#") {
		return URL{}, urlError("must not contain a fragment")
	}
	if strings.Contains(rest, "?") {
		return URL{}, urlError("must not contain a query")
	}
	authority, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	if strings.Contains(authority, "@") {
		return URL{}, urlError("must not contain user info")
	}
	host, port, err := splitHostPort(authority)
	if err != nil {
		return URL{}, err
	}
	if !validPath(path) {
		return URL{}, urlError("must have a valid path")
	}
	u := URL{host: host, port: port, path: path}
	if _, err := netip.ParseAddr(host); err == nil {
		u.ip = true
	}
	if utf8.RuneCountInString(u.String()) > limits.MaxURLLen {
		return URL{}, urlError(fmt.Sprintf("must be at most %d characters", limits.MaxURLLen))
	}
	return u, nil
}

func splitHostPort(authority string) (string, int, error) {
	var rawHost, rawPort string
	hasPort := false
	if strings.HasPrefix(authority, "[") {
		end := strings.IndexByte(authority, ']')
		if end < 0 {
			return "", 0, urlError("must have a valid host")
		}
		rawHost = authority[1:end]
		after := authority[end+1:]
		if after != "" {
			if after[0] != ':' {
				return "", 0, urlError("must have a valid host")
			}
			rawPort, hasPort = after[1:], true
		}
		if !strings.Contains(rawHost, ":") {
			return "", 0, urlError("must have a valid host")
		}
	} else {
		rawHost, rawPort, hasPort = strings.Cut(authority, ":")
		if strings.Contains(rawHost, "[") || strings.Contains(rawHost, "]") {
			return "", 0, urlError("must have a valid host")
		}
	}
	if rawHost == "" {
		return "", 0, urlError("must have a host")
	}
	host, err := netpolicy.NormalizeHost(rawHost)
	switch {
	case errors.Is(err, netpolicy.ErrHostZone):
		return "", 0, urlError("must not contain an IPv6 zone")
	case errors.Is(err, netpolicy.ErrAmbiguousHost):
		return "", 0, urlError("must not use an ambiguous numeric host")
	case err != nil:
		return "", 0, urlError("must have a valid host")
	}
	port := 0
	if hasPort {
		p, ok := parsePort(rawPort)
		if !ok {
			return "", 0, urlError("must have a port between 1 and 65535")
		}
		if p != defaultPort {
			port = p
		}
	}
	return host, port, nil
}

func parsePort(s string) (int, bool) {
	if s == "" || len(s) > 5 || s[0] == '0' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	p, _ := strconv.Atoi(s)
	return p, p >= 1 && p <= 65535
}

// validPath allows RFC 3986 pchar and "/" only, so the stored path is
// exactly what goes on the wire and nothing needs escaping later.
func validPath(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-._~!$&'()*+,;=:@/", c) >= 0:
		case c == '%':
			if i+2 >= len(p) || !isHexDigit(p[i+1]) || !isHexDigit(p[i+2]) {
				return false
			}
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHexDigit(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// String returns the normalised URL.
func (u URL) String() string {
	if u.host == "" {
		return ""
	}
	return u.Origin() + u.path
}

// Host returns the normalised host without port; an IPv6 address comes
// without brackets.
func (u URL) Host() string { return u.host }

// Port returns the port to dial: the explicit one, or 443.
func (u URL) Port() int {
	if u.port == 0 {
		return defaultPort
	}
	return u.port
}

// Path returns the path as given (possibly empty).
func (u URL) Path() string { return u.path }

// Origin returns scheme://host[:port], the only origin requests may go to.
func (u URL) Origin() string {
	h := u.host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if u.port != 0 {
		h += ":" + strconv.Itoa(u.port)
	}
	return "https://" + h
}

// IsIPLiteral reports whether the host is an IP address rather than a name.
func (u URL) IsIPLiteral() bool { return u.ip }

// IsZero reports whether u is the invalid zero URL.
func (u URL) IsZero() bool { return u.host == "" }
