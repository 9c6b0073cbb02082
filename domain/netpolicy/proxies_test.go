package netpolicy_test

import (
	"errors"
	"testing"

	"github.com/codelotse/codelotse/domain/netpolicy"
)

func TestParseTrustedProxies(t *testing.T) {
	for _, raw := range []string{"", " ", "10.0.0.0/8", "10.0.0.0/8, fd00::/8", "192.0.2.7", "2001:db8::1", "10.1.2.3/8", ",10.0.0.0/8,", "::ffff:10.0.0.0/104"} {
		if _, err := netpolicy.ParseTrustedProxies(raw); err != nil {
			t.Errorf("ParseTrustedProxies(%q) = %v", raw, err)
		}
	}
	for _, raw := range []string{"10.0.0.0/33", "10.0.0.0/", "example.com", "10.0.0.0/8;192.0.2.0/24", "fe80::1%eth0", "10.0.0.0/8, nope", "*", "10.0.0.0 /8"} {
		if _, err := netpolicy.ParseTrustedProxies(raw); !errors.Is(err, netpolicy.ErrBadProxy) {
			t.Errorf("ParseTrustedProxies(%q) = %v, want ErrBadProxy", raw, err)
		}
	}
	p, _ := netpolicy.ParseTrustedProxies("10.0.0.0/8, , 192.0.2.7")
	if p.Len() != 2 {
		t.Errorf("Len = %d, want 2", p.Len())
	}
}

func TestClientAddr(t *testing.T) {
	proxies, err := netpolicy.ParseTrustedProxies("10.0.0.0/8, 192.0.2.7, fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		proxies netpolicy.TrustedProxies
		remote  string
		xff     []string
		want    string
	}{
		{name: "no proxy trusted: the peer, whatever the header", remote: "203.0.113.9:5555", xff: []string{"198.51.100.1"}, want: "203.0.113.9"},
		{name: "no proxy trusted, peer 10/8", remote: "10.1.2.3:5555", xff: []string{"198.51.100.1"}, want: "10.1.2.3"},
		{name: "forged header from an untrusted peer ignored", proxies: proxies, remote: "203.0.113.9:5555", xff: []string{"198.51.100.1, 10.0.0.5"}, want: "203.0.113.9"},
		{name: "trusted peer's header used", proxies: proxies, remote: "10.1.2.3:5555", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "trusted peer without a header: the peer", proxies: proxies, remote: "10.1.2.3:5555", want: "10.1.2.3"},
		{name: "a chain of proxies: the first untrusted from the right", proxies: proxies, remote: "10.1.2.3:5555", xff: []string{"198.51.100.1, 10.9.9.9, 192.0.2.7"}, want: "198.51.100.1"},
		{name: "a client's forged entries left of its own address ignored", proxies: proxies, remote: "10.1.2.3:5555", xff: []string{"10.0.0.1, 192.0.2.99, 198.51.100.1, 10.9.9.9"}, want: "198.51.100.1"},
		{name: "several header lines read as one list", proxies: proxies, remote: "10.1.2.3:5555", xff: []string{"6.6.6.6, 198.51.100.1", "10.9.9.9"}, want: "198.51.100.1"},
		{name: "every hop trusted: the leftmost", proxies: proxies, remote: "10.1.2.3:5555", xff: []string{"10.0.0.1, 10.9.9.9"}, want: "10.0.0.1"},
		{name: "malformed entry ends the walk at the last trusted hop", proxies: proxies, remote: "10.1.2.3:5555", xff: []string{"198.51.100.1, unknown, 10.9.9.9"}, want: "10.9.9.9"},
		{name: "malformed nearest entry: the peer", proxies: proxies, remote: "10.1.2.3:5555", xff: []string{"6.6.6.6, <script>"}, want: "10.1.2.3"},
		{name: "empty entries skipped", proxies: proxies, remote: "10.1.2.3:5555", xff: []string{"198.51.100.1, ,", ""}, want: "198.51.100.1"},
		{name: "IPv6 peer and client", proxies: proxies, remote: "[fd00::1]:443", xff: []string{"2001:db8::42, fd12::7"}, want: "2001:db8::42"},
		{name: "IPv6 untrusted peer", proxies: proxies, remote: "[2001:db8::9]:443", xff: []string{"2001:db8::42"}, want: "2001:db8::9"},
		{name: "entries with ports and brackets", proxies: proxies, remote: "10.1.2.3:5555", xff: []string{"[2001:db8::42]:1234, 198.51.100.1:80"}, want: "198.51.100.1"},
		{name: "bracketed IPv6 entry", proxies: proxies, remote: "10.1.2.3:5555", xff: []string{"[2001:db8::42]"}, want: "2001:db8::42"},
		{name: "IPv4-mapped peer trusted as IPv4", proxies: proxies, remote: "[::ffff:10.1.2.3]:5555", xff: []string{"::ffff:198.51.100.1"}, want: "198.51.100.1"},
		{name: "zone dropped", proxies: proxies, remote: "[fe80::1%eth0]:5555", want: "fe80::1"},
		{name: "remote address without port", proxies: proxies, remote: "10.1.2.3", xff: []string{"198.51.100.1"}, want: "198.51.100.1"},
		{name: "remote address that is no address", proxies: proxies, remote: "pipe", xff: []string{"198.51.100.1"}, want: "pipe"},
		{name: "remote address that is no address, untrusted", remote: "@", want: "@"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.proxies.ClientAddr(tt.remote, tt.xff); got != tt.want {
				t.Errorf("ClientAddr(%q, %q) = %q, want %q", tt.remote, tt.xff, got, tt.want)
			}
		})
	}
}
