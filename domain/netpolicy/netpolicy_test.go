package netpolicy_test

import (
	"errors"
	"net/netip"
	"testing"

	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/netpolicy"
)

var (
	public    = netpolicy.ClassPublic
	private   = netpolicy.ClassPrivate
	forbidden = netpolicy.ClassForbidden
)

// TestCheckTable is the whole MC1 address table: first and last address of
// every range, embedded forms, and the public neighbours just outside.
func TestCheckTable(t *testing.T) {
	tests := []struct {
		addr  string
		class netpolicy.Class
	}{
		// 0.0.0.0/8: never.
		{"0.0.0.0", forbidden}, {"0.255.255.255", forbidden}, {"1.0.0.0", public},
		// 10/8
		{"9.255.255.255", public}, {"10.0.0.0", private}, {"10.255.255.255", private}, {"11.0.0.0", public},
		// 100.64/10, with the Alibaba metadata address inside
		{"100.63.255.255", public}, {"100.64.0.0", private}, {"100.127.255.255", private}, {"100.128.0.0", public},
		{"100.100.100.200", forbidden},
		// 127/8
		{"126.255.255.255", public}, {"127.0.0.0", private}, {"127.0.0.1", private}, {"127.255.255.255", private}, {"128.0.0.0", public},
		// 169.254/16: never.
		{"169.253.255.255", public}, {"169.254.0.0", forbidden}, {"169.254.169.254", forbidden}, {"169.254.255.255", forbidden}, {"169.255.0.0", public},
		// 172.16/12
		{"172.15.255.255", public}, {"172.16.0.0", private}, {"172.31.255.255", private}, {"172.32.0.1", public},
		// 192.0.0/24, with the Oracle metadata address inside
		{"191.255.255.255", public}, {"192.0.0.0", private}, {"192.0.0.255", private}, {"192.0.0.192", forbidden},
		// 192.0.2/24
		{"192.0.1.255", public}, {"192.0.2.0", private}, {"192.0.2.255", private}, {"192.0.3.0", public},
		// 192.88.99/24
		{"192.88.98.255", public}, {"192.88.99.0", private}, {"192.88.99.255", private}, {"192.88.100.0", public},
		// 192.168/16
		{"192.167.255.255", public}, {"192.168.0.0", private}, {"192.168.255.255", private}, {"192.169.0.0", public},
		// 198.18/15
		{"198.17.255.255", public}, {"198.18.0.0", private}, {"198.19.255.255", private}, {"198.20.0.0", public},
		// 198.51.100/24
		{"198.51.99.255", public}, {"198.51.100.0", private}, {"198.51.100.255", private}, {"198.51.101.0", public},
		// 203.0.113/24
		{"203.0.112.255", public}, {"203.0.113.0", private}, {"203.0.113.255", private}, {"203.0.114.0", public},
		// 224/4: never.
		{"223.255.255.255", public}, {"224.0.0.0", forbidden}, {"239.255.255.255", forbidden},
		// 240/4 and 255.255.255.255
		{"240.0.0.0", private}, {"255.255.255.254", private}, {"255.255.255.255", private},
		{"8.8.8.8", public}, {"1.1.1.1", public},

		// ::/128 is forbidden like 0.0.0.0; ::1
		{"::", forbidden}, {"::1", private},
		// IPv4-compatible ::/96 (deprecated): at least private, embedded forbidden stays forbidden.
		{"::8.8.8.8", private}, {"::169.254.169.254", forbidden}, {"::2", forbidden},
		// ::ffff:0:0/96: the embedded IPv4 decides.
		{"::ffff:0.0.0.0", forbidden}, {"::ffff:8.8.8.8", public}, {"::ffff:10.0.0.1", private}, {"::ffff:127.0.0.1", private},
		{"::ffff:169.254.169.254", forbidden}, {"::ffff:224.0.0.1", forbidden}, {"::ffff:255.255.255.255", private},
		// ::ffff:0:0:0/96 (SIIT, IPv4-translated): never public, and as bad as the IPv4 it carries.
		{"::ffff:0:a9fe:a9fe", forbidden}, {"::ffff:0:7f00:1", private}, {"::ffff:0:808:808", private}, {"::ffff:0:e000:1", forbidden},
		{"::fffe:ffff:ffff", public}, {"::1:0:0:0", public},
		// 64:ff9b::/96 (NAT64): the embedded IPv4 decides.
		{"64:ff9b::808:808", public}, {"64:ff9b::a00:1", private}, {"64:ff9b::7f00:1", private},
		{"64:ff9b::a9fe:a9fe", forbidden}, {"64:ff9b::e000:1", forbidden}, {"64:ff9b::", forbidden},
		{"64:ff9b::1:0:0", public}, {"64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", public},
		// 64:ff9b:1::/48 (local NAT64): private, forbidden when any RFC 6052 offset carries a forbidden address.
		{"64:ff9b:1::", private}, {"64:ff9b:1::808:808", private}, {"64:ff9b:1::a9fe:a9fe", forbidden},
		{"64:ff9b:1:a9fe:a9:fe00::", forbidden}, {"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", private}, {"64:ff9b:2::", public},
		// 2002::/16 (6to4): the IPv4 in bits 16–48 decides.
		{"2002:808:808::", public}, {"2002:a00:1::", private}, {"2002:7f00:1::1", private},
		{"2002:a9fe:a9fe::", forbidden}, {"2002::", forbidden}, {"2002:e000:1::", forbidden},
		{"2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", public}, {"2003::", public},
		// 2001::/32 (Teredo): private; a forbidden server or (inverted) client address is forbidden.
		{"2001:0:808:808::", private}, {"2001:0:808:808:ffff:ffff:f7f7:f7f7", private}, {"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", forbidden /* client ^ffffffff = 0.0.0.0 */},
		{"2001:0:a9fe:a9fe::", forbidden}, {"2001:0:808:808::5601:5601", forbidden}, {"2001:1::", public},
		// 2001:db8::/32
		{"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", public}, {"2001:db8::", private}, {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", private}, {"2001:db9::", public},
		// fc00::/7 with the AWS metadata address inside: never.
		{"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", public}, {"fc00::", private}, {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", private},
		{"fd00:ec2::254", forbidden}, {"fd00:ec2::253", private}, {"fd00:ec2::255", private},
		// fe80::/10: never. fec0::/10 (old site-local): private.
		{"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", public}, {"fe80::", forbidden}, {"fe80::1", forbidden}, {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", forbidden},
		{"fec0::", private}, {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", private},
		// ff00::/8: never.
		{"ff00::", forbidden}, {"ff02::1", forbidden}, {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", forbidden},
		{"2606:4700::1111", public}, {"2000::", public},
		// Zones are ignored.
		{"fe80::1%eth0", forbidden}, {"2606:4700::1111%eth0", public}, {"::1%lo", private}, {"::ffff:10.0.0.1%eth0", private},
	}

	hosts, err := netpolicy.ParsePrivateHosts("wiki.corp.example")
	if err != nil {
		t.Fatal(err)
	}
	rulesets := []struct {
		name    string
		rules   netpolicy.Rules
		host    string
		private bool // whether private addresses pass
	}{
		{"self-hosted listed", netpolicy.NewRules(gate.SelfHosted, hosts), "wiki.corp.example", true},
		{"self-hosted listed other spelling", netpolicy.NewRules(gate.SelfHosted, hosts), "WIKI.Corp.Example.", true},
		{"self-hosted unlisted", netpolicy.NewRules(gate.SelfHosted, hosts), "other.corp.example", false},
		{"self-hosted subdomain of listed", netpolicy.NewRules(gate.SelfHosted, hosts), "api.wiki.corp.example", false},
		{"enterprise listed", netpolicy.NewRules(gate.Enterprise, hosts), "wiki.corp.example", false},
		{"enterprise unlisted", netpolicy.NewRules(gate.Enterprise, hosts), "other.corp.example", false},
		{"zero rules", netpolicy.Rules{}, "wiki.corp.example", false},
	}
	for _, tt := range tests {
		addr := netip.MustParseAddr(tt.addr)
		t.Run(tt.addr, func(t *testing.T) {
			if got := netpolicy.Classify(addr); got != tt.class {
				t.Fatalf("Classify(%s) = %v, want %v", tt.addr, got, tt.class)
			}
			for _, rs := range rulesets {
				err := rs.rules.Check(rs.host, addr)
				var want netpolicy.Reason
				switch {
				case tt.class == forbidden:
					want = netpolicy.ReasonForbidden
				case tt.class == private && !rs.private:
					want = netpolicy.ReasonPrivate
				}
				var be *netpolicy.BlockedError
				switch {
				case want == netpolicy.Reason{}:
					if err != nil {
						t.Errorf("%s: Check(%q, %s) = %v, want nil", rs.name, rs.host, tt.addr, err)
					}
				case !errors.As(err, &be) || be.Reason != want || !errors.Is(err, netpolicy.ErrBlocked):
					t.Errorf("%s: Check(%q, %s) = %v, want %v", rs.name, rs.host, tt.addr, err, want)
				}
			}
		})
	}
}

func TestClassifyInvalid(t *testing.T) {
	if got := netpolicy.Classify(netip.Addr{}); got != forbidden {
		t.Errorf("Classify(invalid) = %v, want %v", got, forbidden)
	}
	if got := (netpolicy.Rules{}).Check("x", netip.Addr{}); got == nil {
		t.Errorf("Check(invalid) = nil")
	}
	for _, c := range []netpolicy.Class{public, private, forbidden} {
		if c.String() == "" {
			t.Errorf("Class %v has no name", c)
		}
	}
}

func TestCheckAll(t *testing.T) {
	hosts, _ := netpolicy.ParsePrivateHosts("wiki.corp.example")
	rules := netpolicy.NewRules(gate.SelfHosted, hosts)
	a := netip.MustParseAddr
	tests := []struct {
		name  string
		host  string
		addrs []netip.Addr
		want  netpolicy.Reason // zero: pass
	}{
		{"public", "example.com", []netip.Addr{a("8.8.8.8"), a("2606:4700::1111")}, netpolicy.Reason{}},
		{"empty", "example.com", nil, netpolicy.ReasonNoAddress},
		{"public decoy with private", "example.com", []netip.Addr{a("8.8.8.8"), a("10.0.0.1")}, netpolicy.ReasonPrivate},
		{"listed private", "wiki.corp.example", []netip.Addr{a("10.0.0.1"), a("fd00::1")}, netpolicy.Reason{}},
		{"listed with metadata", "wiki.corp.example", []netip.Addr{a("10.0.0.1"), a("169.254.169.254")}, netpolicy.ReasonForbidden},
		{"listed empty", "wiki.corp.example", []netip.Addr{}, netpolicy.ReasonNoAddress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := rules.CheckAll(tt.host, tt.addrs)
			var be *netpolicy.BlockedError
			if tt.want == (netpolicy.Reason{}) {
				if err != nil {
					t.Errorf("CheckAll(%q, %v) = %v, want nil", tt.host, tt.addrs, err)
				}
				return
			}
			if !errors.As(err, &be) || be.Reason != tt.want {
				t.Errorf("CheckAll(%q, %v) = %v, want %v", tt.host, tt.addrs, err, tt.want)
			}
			if err.Error() == "" || be.Reason.String() == "" {
				t.Errorf("CheckAll error has no text")
			}
		})
	}
}

func TestParsePrivateHosts(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr error
	}{
		{in: "", want: nil},
		{in: " , ,", want: nil},
		{in: "wiki.corp.example", want: []string{"wiki.corp.example"}},
		{in: " Wiki.Corp.Example. , jira.corp.example,,WIKI.corp.example", want: []string{"wiki.corp.example", "jira.corp.example"}},
		{in: "bücher.corp", want: []string{"xn--bcher-kva.corp"}},
		{in: "10.0.0.5, [fd00::1], fd00:0::2", want: []string{"10.0.0.5", "fd00::1", "fd00::2"}},
		{in: "wiki corp", wantErr: netpolicy.ErrInvalidHost},
		{in: "ok.example,a_b.example", wantErr: netpolicy.ErrInvalidHost},
		{in: "127.1", wantErr: netpolicy.ErrAmbiguousHost},
		{in: "fe80::1%eth0", wantErr: netpolicy.ErrHostZone},
		{in: "[]", wantErr: netpolicy.ErrEmptyHost},
		{in: "1.2.3.4:80", wantErr: netpolicy.ErrInvalidHost},
		{in: "[1.2.3.4]", want: []string{"1.2.3.4"}},
		{in: "[0x7f.1]", wantErr: netpolicy.ErrAmbiguousHost},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := netpolicy.ParsePrivateHosts(tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ParsePrivateHosts(%q) = %v, want %v", tt.in, err, tt.wantErr)
			}
			if err != nil {
				var pe *netpolicy.PrivateHostError
				if !errors.As(err, &pe) || pe.Error() == "" || pe.Unwrap() == nil {
					t.Errorf("ParsePrivateHosts(%q) = %v, want a *PrivateHostError", tt.in, err)
				}
				return
			}
			h := got.Hosts()
			if len(h) != len(tt.want) {
				t.Fatalf("ParsePrivateHosts(%q) = %q, want %q", tt.in, h, tt.want)
			}
			for i := range h {
				if h[i] != tt.want[i] {
					t.Errorf("ParsePrivateHosts(%q) = %q, want %q", tt.in, h, tt.want)
				}
			}
		})
	}
}

func TestPrivateHostsContains(t *testing.T) {
	hosts, err := netpolicy.ParsePrivateHosts("wiki.corp.example,bücher.corp,fd00::1,10.0.0.5")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		want bool
	}{
		{"wiki.corp.example", true},
		{"WIKI.CORP.EXAMPLE.", true},
		{"wiki。corp。example", true},
		{"xn--bcher-kva.corp", true},
		{"BÜCHER.corp", true},
		{"[fd00::1]", true},
		{"fd00:0:0::1", true},
		{"10.0.0.5", true},
		{"wiki.corp.example.evil", false},
		{"api.wiki.corp.example", false},
		{"corp.example", false},
		{"", false},
		{"wiki.corp.example\x00", false},
		{"10.0.0.6", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			if got := hosts.Contains(tt.host); got != tt.want {
				t.Errorf("Contains(%q) = %v, want %v", tt.host, got, tt.want)
			}
		})
	}
	if (netpolicy.PrivateHosts{}).Contains("wiki.corp.example") {
		t.Errorf("zero PrivateHosts contains a host")
	}
}

func TestNormalizeHost(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr error
	}{
		{"Example.COM.", "example.com", nil},
		{"１２７.０.０.１", "127.0.0.1", nil},
		{"2001:DB8::1", "2001:db8::1", nil},
		{"", "", netpolicy.ErrEmptyHost},
		{".", "", netpolicy.ErrInvalidHost},
		{"a..", "", netpolicy.ErrInvalidHost},
		{"0x7f000001", "", netpolicy.ErrAmbiguousHost},
		{"0X7F.1", "", netpolicy.ErrAmbiguousHost},
		{"a.0xg", "a.0xg", nil},
		{"00.0.0.0", "", netpolicy.ErrAmbiguousHost},
		{"1.2.3.4", "1.2.3.4", nil},
		{"::ffff:1.2.3.4", "::ffff:1.2.3.4", nil},
		{"1.2.3.4:5", "", netpolicy.ErrInvalidHost},
		{"fe80::1%25eth0", "", netpolicy.ErrHostZone},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := netpolicy.NormalizeHost(tt.in)
			if got != tt.want && tt.wantErr == nil || !errors.Is(err, tt.wantErr) {
				t.Errorf("NormalizeHost(%q) = %q, %v, want %q, %v", tt.in, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{"::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::", "fd00:ec2::254", "fe80::1", "::1", "2606:4700::1111", "64:ff9b:1::a9fe:a9fe", "2001:0:808:808::5601:5601"} {
		b := netip.MustParseAddr(s).As16()
		f.Add(b[:])
	}
	hosts, _ := netpolicy.ParsePrivateHosts("wiki.corp.example")
	listed := netpolicy.NewRules(gate.SelfHosted, hosts)
	forbiddenRanges := []netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("224.0.0.0/4"),
		netip.MustParsePrefix("fe80::/10"), netip.MustParsePrefix("ff00::/8"), netip.MustParsePrefix("fd00:ec2::254/128"),
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var a16 [16]byte
		copy(a16[:], b)
		var a4 [4]byte
		copy(a4[:], b)
		for _, addr := range []netip.Addr{netip.AddrFrom16(a16), netip.AddrFrom4(a4), netip.AddrFrom16(a16).WithZone("eth0")} {
			class := netpolicy.Classify(addr)
			err := listed.Check("wiki.corp.example", addr)
			plain := addr.WithZone("").Unmap()
			for _, p := range forbiddenRanges {
				if p.Contains(plain) && (class != forbidden || err == nil) {
					t.Fatalf("Check(%s) = %v, class %v: forbidden range %s passed", addr, err, class, p)
				}
			}
			if class == forbidden && err == nil {
				t.Fatalf("Check(%s) = nil for a forbidden address", addr)
			}
			if (netpolicy.NewRules(gate.Enterprise, hosts).Check("wiki.corp.example", addr) == nil) != (class == public) {
				t.Fatalf("enterprise Check(%s) disagrees with class %v", addr, class)
			}
		}
	})
}
