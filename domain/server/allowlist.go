package server

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/codelotse/codelotse/domain/field"
)

// AllowedURLs is the operator's allowlist of MCP server URLs
// (QUAVON_MCP_ALLOWED_URLS, MC1): https URL prefixes. A server whose URL
// it does not allow can be neither registered nor moved there, and a
// stored one is not used: no review, discovery, connection test or OAuth
// connection reaches it, and its status is [StatusOutsideAllowlist]. The
// zero value, like an empty list, allows every URL.
type AllowedURLs struct {
	// prefixes are parsed by ParseURL, their paths without a trailing
	// slash ("" for a whole origin) and with upper-case escapes.
	prefixes []URL
}

// ErrOutsideAllowlist: a connection to a URL the operator's allowlist
// does not allow (the connector's refusal; the use cases answer
// [AllowedURLs.Check]'s field error).
var ErrOutsideAllowlist = errors.New("outside_allowlist")

// OutsideAllowlistReason is the reason of [AllowedURLs.Check]'s field
// error on "url".
const OutsideAllowlistReason = "is outside the operator's allowlist of MCP server URLs"

// AllowedURLError is an entry of the allowlist that is not an https URL
// prefix. It names the entry by its position (1 for the first
// comma-separated entry) and never repeats it: an entry may hold
// something secret-looking.
type AllowedURLError struct {
	Entry  int
	Reason string
}

func (e *AllowedURLError) Error() string { return fmt.Sprintf("entry %d %s", e.Entry, e.Reason) }

// ParseAllowedURLs parses comma-separated https URL prefixes
// ("https://wiki.example.com/mcp, https://tools.example.org"). Blank
// entries are skipped (they still count in the positions). Each entry is
// a server URL by [ParseURL]'s rules (https, a host, an optional port and
// path; no user info, query or fragment), normalised the same way, whose
// path has no dot segment, no empty segment and no encoded separator
// ([AllowedURLError] otherwise). A trailing slash changes nothing:
// https://h/mcp/ is https://h/mcp.
func ParseAllowedURLs(raw string) (AllowedURLs, error) {
	var a AllowedURLs
	for i, part := range strings.Split(raw, ",") {
		s := strings.TrimSpace(part)
		if s == "" {
			continue
		}
		u, err := ParseURL(s)
		if err != nil {
			reason := "must be an https URL"
			var fe *field.Error
			if errors.As(err, &fe) {
				reason = fe.Reason
			}
			return AllowedURLs{}, &AllowedURLError{Entry: i + 1, Reason: "is not an https URL prefix: " + reason}
		}
		if !plainPath(u.path) || strings.Contains(u.path, "//") {
			return AllowedURLs{}, &AllowedURLError{Entry: i + 1,
				Reason: "is not an https URL prefix: its path must not hold dot segments, empty segments or encoded separators"}
		}
		u.path = upperEscapes(strings.TrimSuffix(u.path, "/"))
		a.prefixes = append(a.prefixes, u)
	}
	return a, nil
}

// Len is the number of entries; 0 allows every URL.
func (a AllowedURLs) Len() int { return len(a.prefixes) }

// Allows reports whether u may be used. An empty list allows every
// (valid) URL. Otherwise u must have an entry's host and port, compared
// normalised as [ParseURL] leaves them (the host lowercase ASCII with
// IDNA applied and no trailing dot, so a look-alike host is another
// host; no port and :443 are the same), and its path must be the entry's
// path or lie below it on a segment boundary: https://h/mcp allows
// https://h/mcp and https://h/mcp/x, never https://h/mcpx. The path is
// compared as written, escapes aside (%2f and %2F are one), so an
// escaped letter is another path; and a path with a dot segment ("..",
// "%2e%2e", "..;x"), an encoded slash or backslash or a double escape is
// never allowed, since a server that decodes it could leave the prefix.
// The scheme is always https, and user info, queries and fragments
// never parse.
func (a AllowedURLs) Allows(u URL) bool {
	if u.IsZero() {
		return false
	}
	if len(a.prefixes) == 0 {
		return true
	}
	if !plainPath(u.path) {
		return false
	}
	path := upperEscapes(u.path)
	for _, p := range a.prefixes {
		if u.host == p.host && u.Port() == p.Port() && underPath(path, p.path) {
			return true
		}
	}
	return false
}

// Check is [AllowedURLs.Allows] as the use cases answer it: nil, or a
// [*field.Error] on "url" (validation_failed) that does not repeat u.
func (a AllowedURLs) Check(u URL) error {
	if a.Allows(u) {
		return nil
	}
	return &field.Error{Field: "url", Reason: OutsideAllowlistReason}
}

// underPath reports whether path is prefix or below it: prefix has no
// trailing slash, "" stands for the whole origin (every path is "" or
// starts with a slash).
func underPath(path, prefix string) bool {
	return prefix == "" || path == prefix || strings.HasPrefix(path, prefix+"/")
}

// plainPath reports whether no segment of p, once its escapes are
// decoded, is a dot segment (also before a ";" parameter, which some
// servers drop) or holds a slash, a backslash, a percent sign (a double
// escape) or a control character. ParseURL has checked the escapes.
func plainPath(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		dec := decodeEscapes(seg)
		if strings.ContainsAny(dec, `/\%`) || strings.ContainsFunc(dec, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return false
		}
		if name, _, _ := strings.Cut(dec, ";"); name == "." || name == ".." {
			return false
		}
	}
	return true
}

// decodeEscapes decodes the %XX escapes of s (valid ones, as ParseURL
// leaves them).
func decodeEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// upperEscapes writes the hex digits of every escape in upper case, so
// %2f and %2F compare equal.
func upperEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = upperHex(b[i+1]), upperHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func upperHex(c byte) byte {
	if c >= 'a' && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

// StatusUnder is [Server.Status] under the operator's allowlist: a
// server whose URL it does not allow is [StatusOutsideAllowlist], whatever
// else holds; otherwise Status(now).
func (s *Server) StatusUnder(allowed AllowedURLs, now time.Time) Status {
	if !allowed.Allows(s.url) {
		return StatusOutsideAllowlist
	}
	return s.Status(now)
}
