package netpolicy

import (
	"errors"
	"net/netip"
	"strings"
)

// ErrBadProxy is an entry of QUAVON_TRUSTED_PROXIES that is not a CIDR
// (or a single address).
var ErrBadProxy = errors.New("not a CIDR")

// TrustedProxies is the parsed QUAVON_TRUSTED_PROXIES: the networks of
// the reverse proxies (an ingress controller, a load balancer) whose
// X-Forwarded-For names the client. The zero value trusts no proxy: the
// client is the connection's peer, whatever a header says.
type TrustedProxies struct {
	prefixes []netip.Prefix
}

// ParseTrustedProxies parses comma-separated CIDRs ("10.0.0.0/8,
// fd00::/8"); a bare address is its own /32 or /128. Blank entries are
// skipped; any other entry that is not a CIDR is [ErrBadProxy].
func ParseTrustedProxies(raw string) (TrustedProxies, error) {
	var t TrustedProxies
	for _, part := range strings.Split(raw, ",") {
		s := strings.TrimSpace(part)
		if s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil || a.Zone() != "" {
				return TrustedProxies{}, ErrBadProxy
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
		}
		t.prefixes = append(t.prefixes, p.Masked())
	}
	return t, nil
}

// Len is the number of trusted networks.
func (t TrustedProxies) Len() int { return len(t.prefixes) }

// trusts reports whether a is inside a trusted network.
func (t TrustedProxies) trusts(a netip.Addr) bool {
	for _, p := range t.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr is the address of the client of a request whose connection
// came from remoteAddr ("host:port", as net/http gives it) with the
// X-Forwarded-For header lines forwardedFor. Only when the peer is a
// trusted proxy is the header read: from the right (the entry the
// nearest proxy appended), past every address inside a trusted network,
// to the first one that is not, which is the client. An entry that is no
// address (a proxy that wrote "unknown", a client's junk) ends the walk:
// what lies left of it is not vouched for, so the client is the last
// trusted hop. When every entry is trusted, the client is the leftmost.
// A peer outside the list (a client that forged the header) is the
// client itself. The result is an address in its canonical form (IPv4
// unmapped, no zone), or remoteAddr as it is when it holds no address.
func (t TrustedProxies) ClientAddr(remoteAddr string, forwardedFor []string) string {
	peer, ok := parseHop(remoteAddr)
	if !ok {
		return remoteAddr
	}
	if !t.trusts(peer) {
		return peer.String()
	}
	client := peer
	for i := len(forwardedFor) - 1; i >= 0; i-- {
		entries := strings.Split(forwardedFor[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			s := strings.TrimSpace(entries[j])
			if s == "" {
				continue // "a, , b" or an empty line: nothing was written there
			}
			hop, ok := parseHop(s)
			if !ok {
				return client.String()
			}
			client = hop
			if !t.trusts(hop) {
				return client.String()
			}
		}
	}
	return client.String()
}

// parseHop reads one address of X-Forwarded-For (or the peer's host):
// "192.0.2.1", "2001:db8::1", also with a port ("192.0.2.1:443",
// "[2001:db8::1]:443") or in brackets; IPv4-mapped IPv6 is unmapped and
// a zone dropped.
func parseHop(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		if ap, perr := netip.ParseAddrPort(s); perr == nil {
			a, err = ap.Addr(), nil
		} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
			a, err = netip.ParseAddr(s[1 : len(s)-1])
		}
	}
	if err != nil || !a.IsValid() {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}
