package poison

import (
	"net/netip"
	"strings"
)

// tlds are the top-level domains a bare domain with a path is read
// under ("evil.io/upload"): common ones, and those abused most.
var tlds = map[string]bool{"com": true, "net": true, "org": true, "io": true, "dev": true, "app": true, "ai": true, "co": true,
	"xyz": true, "info": true, "biz": true, "me": true, "sh": true, "site": true, "online": true, "top": true, "ru": true, "cn": true,
	"tk": true, "cc": true, "ly": true, "gg": true, "link": true, "click": true, "pw": true, "su": true, "ws": true}

// url reports a link to a host that is not of the server's site (see
// sameSite): an http(s) URL, a www. host, a bare domain followed by a
// path (not an API version: networking.k8s.io/v1), a data: URI; every
// link when the server's host is unknown.
func (s *scan) url(v view) (string, bool) {
	low := lowerASCII(v.shown)
	best := -1
	for _, l := range links(low) {
		if (l.host == "" || !sameSite(l.host, s.c.ServerHost)) && (best < 0 || l.at < best) {
			best = l.at
		}
	}
	if best < 0 {
		return "", false
	}
	return s.atShown(v, best), true
}

// link is a link's offset and host ("" for a data: URI).
type link struct {
	at   int
	host string
}

// links are the links of a lower-case text. Each kind is found in one
// pass: the hosts read after a scheme, or before a slash, do not overlap.
func links(low string) []link {
	var out []link
	for _, scheme := range []string{"https://", "http://"} {
		for _, i := range occurrences(low, scheme, len(low)) {
			if i > 0 && isHostByte(low[i-1]) {
				continue // "xhttp://"
			}
			if h := hostAt(low, i+len(scheme)); h != "" {
				out = append(out, link{i, h})
			}
		}
	}
	for _, i := range occurrences(low, "www.", len(low)) {
		if (i == 0 || !isHostByte(low[i-1]) && low[i-1] != '/' && low[i-1] != '.') && strings.Contains(hostAt(low, i+4), ".") {
			out = append(out, link{i, hostAt(low, i)})
		}
	}
	for _, i := range occurrences(low, "data:", len(low)) {
		if (i == 0 || !isHostByte(low[i-1])) && dataURI(low[i+5:]) {
			out = append(out, link{i, ""})
		}
	}
	return append(out, bareDomains(low)...)
}

// occurrences are the offsets of needle in s, at most n.
func occurrences(s, needle string, n int) []int {
	var out []int
	for off := 0; len(out) < n; {
		i := strings.Index(s[off:], needle)
		if i < 0 {
			break
		}
		out = append(out, off+i)
		off += i + len(needle)
	}
	return out
}

func isHostByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
}

// hostAt is the host of a URL whose authority starts at i (userinfo
// and port dropped, brackets of an IPv6 literal kept off).
func hostAt(low string, i int) string {
	j := i
	for j < len(low) && strings.IndexByte(" \t\n/?#\"'<>`)]", low[j]) < 0 {
		j++
	}
	auth := low[i:j]
	if k := strings.LastIndexByte(auth, '@'); k >= 0 {
		auth = auth[k+1:]
	}
	if strings.HasPrefix(auth, "[") {
		if k := strings.IndexByte(auth, ']'); k > 0 {
			return auth[1:k]
		}
	}
	if k := strings.LastIndexByte(auth, ':'); k >= 0 {
		auth = auth[:k]
	}
	return strings.TrimRight(auth, ".,;")
}

// dataURI reports a media type then ";" or "," after "data:".
func dataURI(s string) bool {
	slash := strings.IndexByte(s[:min(len(s), 40)], '/')
	if slash <= 0 {
		return false
	}
	for i := 0; i < slash; i++ {
		if !(s[i] >= 'a' && s[i] <= 'z') {
			return false
		}
	}
	end := strings.IndexAny(s[:min(len(s), 80)], ";,")
	return end > slash+1
}

// bareDomains are the domains directly followed by a path ("evil.io/x"),
// under one of tlds, not part of a URL with a scheme, not before an API
// version ("/v1", "/v1beta1").
func bareDomains(low string) []link {
	var out []link
	for _, slash := range occurrences(low, "/", len(low)) {
		start := slash
		for start > 0 && isHostByte(low[start-1]) {
			start--
		}
		host := low[start:slash]
		dot := strings.LastIndexByte(host, '.')
		if dot <= 0 || !tlds[host[dot+1:]] || start > 0 && strings.IndexByte(":/@", low[start-1]) >= 0 || apiVersion(low[slash+1:]) {
			continue
		}
		out = append(out, link{start, host})
	}
	return out
}

// apiVersion reports a path that starts with an API version segment.
func apiVersion(path string) bool {
	if len(path) < 2 || path[0] != 'v' || path[1] < '0' || path[1] > '9' {
		return false
	}
	i := 1
	for i < len(path) && (path[i] >= '0' && path[i] <= '9' || path[i] >= 'a' && path[i] <= 'z') {
		i++
	}
	return i == len(path) || path[i] == ' ' || path[i] == '/' || path[i] == '\n' || path[i] == ')' || path[i] == ','
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
