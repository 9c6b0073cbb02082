package poison

import (
	"net/netip"
	"regexp"
	"strings"
)

// links are http(s) URLs, www. hosts and bare domains followed by a
// path, and data: URIs, in the shown text; group 1 is the host.
var links = regexp.MustCompile(`(?i)` +
	`\bhttps?://(?:[^\s/?#@"'<>\x60]*@)?(\[[0-9a-f:.]+\]|[^\s/?#:"'<>\x60)\]]+)` +
	`|(?:^|[^\w./:@-])(www\.[a-z0-9-]+(?:\.[a-z0-9-]+)+)` +
	`|(?:^|[^\w./:@-])((?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|app|ai|co|xyz|info|biz|me|sh|site|online|top|ru|cn|tk|cc|ly|gg|link|click|pw|su|ws))/(?:[^\sv]|v[^\s0-9])` +
	`|\b(data):[a-z]+/[a-z0-9.+-]+[;,]`)

// url reports a link to a host that is not of the server's site (see
// sameSite); every link when the server's host is unknown.
func (s *scan) url(v view) (string, bool) {
	for _, m := range links.FindAllStringSubmatchIndex(v.shown, 64) {
		for g := 2; g+1 < len(m); g += 2 {
			if m[g] < 0 {
				continue
			}
			host := strings.ToLower(strings.TrimRight(v.shown[m[g]:m[g+1]], "."))
			if host == "data" || !sameSite(host, s.c.ServerHost) {
				return s.atShown(v, m[0]), true
			}
		}
	}
	return "", false
}

// sameSite reports whether host is of the server's site: the same host,
// or both under one registrable domain, taken as the last two labels
// (three when the second to last is a short second-level label of a
// country domain, as in example.co.uk), or under registrable domains of
// one name in different top-level domains (the vendor's sentry.io for a
// server at mcp.sentry.dev). IP addresses must be equal.
func sameSite(host, server string) bool {
	host = strings.Trim(strings.ToLower(host), "[]")
	server = strings.Trim(strings.ToLower(server), "[]")
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[:i], ":") {
		host = host[:i] // a port
	}
	if server == "" {
		return false
	}
	if host == server {
		return true
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return false
	}
	if _, err := netip.ParseAddr(server); err == nil {
		return false
	}
	h, sv := site(host), site(server)
	return h == sv || brand(h) != "" && brand(h) == brand(sv)
}

// brand is the first label of a registrable domain: sentry.io and
// sentry.dev are one vendor's.
func brand(site string) string {
	b, _, _ := strings.Cut(site, ".")
	return b
}

// site is the registrable domain of a host, approximately (no public
// suffix list in the domain).
func site(host string) string {
	labels := strings.Split(host, ".")
	n := 2
	if k := len(labels); k >= 3 && len(labels[k-1]) == 2 && len(labels[k-2]) <= 3 {
		n = 3
	}
	if len(labels) <= n {
		return host
	}
	return strings.Join(labels[len(labels)-n:], ".")
}
