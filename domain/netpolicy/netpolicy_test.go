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

// Where the rows of [TestCheckTable] come from.
const (
	ianaV4      = "IANA IPv4 Special-Purpose Address Registry"
	ianaV4Mcast = "IANA IPv4 Multicast Address Space registry"
	ianaV6      = "IANA IPv6 Special-Purpose Address Registry"
	ianaV6Space = "IANA Internet Protocol Version 6 Address Space registry (reserved by IETF)"
	ianaV6Mcast = "IANA IPv6 Multicast Address Space registry"
	rfc6052     = "RFC 6052 (IPv4-embedded IPv6 addresses) and RFC 8215 (local-use NAT64 prefix)"
	aws         = "AWS whitepaper IPv6 on AWS, supporting Amazon VPC services (IMDS fd00:ec2::254, DNS ::253, NTP ::123), and the EC2 user guide"
	eks         = "AWS EKS user guide, set up the EKS Pod Identity Agent (169.254.170.23, fd00:ec2::23)"
	gcp         = "Google Cloud Compute Engine docs, about VM metadata (169.254.169.254, fd20:ce::254)"
	oci         = "OCI Python SDK, instance principals signer (IMDS over IPv6 at fd00:c1::a9fe:a9fe)"
	scaleway    = "cloud-init docs, Scaleway datasource (169.254.42.42, fd00:42::42)"
	akamai      = "cloud-init docs, Akamai (Linode) datasource (169.254.169.254, fd00:a9fe:a9fe::1)"
	openstack   = "OpenStack Neutron spec, IPv6 support in the metadata service (fe80::a9fe:a9fe)"
	azure       = "Microsoft Learn, what is IP address 168.63.129.16 (WireServer and host agent)"
	oracle      = "Oracle Cloud Infrastructure docs, getting instance metadata (192.0.0.192)"
	alibaba     = "Alibaba Cloud ECS docs, instance metadata (100.100.100.200)"
	zones       = "RFC 4007 zone indices: the zone never changes the address"
	neighbours  = "ordinary global unicast addresses (public DNS resolvers)"
)

// TestCheckTable is the whole MC1 address table: first and last address of
// every range, embedded forms, and the public neighbours just outside.
// Every group names its source. Decisions beyond the sources:
//   - IPv4-mapped ::ffff:0:0/96 (not globally reachable in the registry) is
//     judged by the IPv4 address it carries: resolvers hand IPv4 answers
//     over in that form and the socket connects to the IPv4 address, so the
//     form itself never appears on the wire.
//   - 2001::/23 is private as a whole, the globally reachable entries inside
//     it included (fail closed: they are anycast protocol endpoints and
//     overlay identifiers, never an MCP server).
func TestCheckTable(t *testing.T) {
	type row struct {
		addr  string
		class netpolicy.Class
	}
	groups := []struct {
		source string
		rows   []row
	}{
		{ianaV4 + ": 0.0.0.0/8 this network", []row{
			{"0.0.0.0", forbidden}, {"0.255.255.255", forbidden}, {"1.0.0.0", public},
		}},
		{ianaV4 + ": 10.0.0.0/8 private-use", []row{
			{"9.255.255.255", public}, {"10.0.0.0", private}, {"10.255.255.255", private}, {"11.0.0.0", public},
		}},
		{ianaV4 + ": 100.64.0.0/10 shared address space", []row{
			{"100.63.255.255", public}, {"100.64.0.0", private}, {"100.127.255.255", private}, {"100.128.0.0", public},
		}},
		{alibaba, []row{
			{"100.100.100.200", forbidden}, {"100.100.100.199", private}, {"100.100.100.201", private},
		}},
		{ianaV4 + ": 127.0.0.0/8 loopback", []row{
			{"126.255.255.255", public}, {"127.0.0.0", private}, {"127.0.0.1", private}, {"127.255.255.255", private}, {"128.0.0.0", public},
		}},
		{ianaV4 + ": 169.254.0.0/16 link local", []row{
			{"169.253.255.255", public}, {"169.254.0.0", forbidden}, {"169.254.255.255", forbidden}, {"169.255.0.0", public},
		}},
		{aws + "; " + gcp, []row{{"169.254.169.254", forbidden}}},
		{eks, []row{{"169.254.170.23", forbidden}}},
		{ianaV4 + ": 172.16.0.0/12 private-use", []row{
			{"172.15.255.255", public}, {"172.16.0.0", private}, {"172.31.255.255", private}, {"172.32.0.1", public},
		}},
		{ianaV4 + ": 192.0.0.0/24 IETF protocol assignments", []row{
			{"191.255.255.255", public}, {"192.0.0.0", private}, {"192.0.0.255", private},
		}},
		{oracle, []row{{"192.0.0.192", forbidden}, {"192.0.0.191", private}, {"192.0.0.193", private}}},
		{ianaV4 + ": 192.0.2.0/24 documentation (TEST-NET-1)", []row{
			{"192.0.1.255", public}, {"192.0.2.0", private}, {"192.0.2.255", private}, {"192.0.3.0", public},
		}},
		{ianaV4 + ": 192.88.99.0/24 6to4 relay anycast (deprecated by RFC 7526)", []row{
			{"192.88.98.255", public}, {"192.88.99.0", private}, {"192.88.99.255", private}, {"192.88.100.0", public},
		}},
		{ianaV4 + ": 192.168.0.0/16 private-use", []row{
			{"192.167.255.255", public}, {"192.168.0.0", private}, {"192.168.255.255", private}, {"192.169.0.0", public},
		}},
		{ianaV4 + ": 198.18.0.0/15 benchmarking", []row{
			{"198.17.255.255", public}, {"198.18.0.0", private}, {"198.19.255.255", private}, {"198.20.0.0", public},
		}},
		{ianaV4 + ": 198.51.100.0/24 documentation (TEST-NET-2)", []row{
			{"198.51.99.255", public}, {"198.51.100.0", private}, {"198.51.100.255", private}, {"198.51.101.0", public},
		}},
		{ianaV4 + ": 203.0.113.0/24 documentation (TEST-NET-3)", []row{
			{"203.0.112.255", public}, {"203.0.113.0", private}, {"203.0.113.255", private}, {"203.0.114.0", public},
		}},
		{ianaV4Mcast + ": 224.0.0.0/4", []row{
			{"223.255.255.255", public}, {"224.0.0.0", forbidden}, {"239.255.255.255", forbidden},
		}},
		{ianaV4 + ": 240.0.0.0/4 reserved", []row{{"240.0.0.0", private}, {"255.255.255.254", private}}},
		{ianaV4 + ": 255.255.255.255/32 limited broadcast", []row{
			{"255.255.255.255", forbidden}, {"::ffff:255.255.255.255", forbidden}, {"64:ff9b::ffff:ffff", forbidden}, {"2002:ffff:ffff::", forbidden},
			{"2001:0:808:808::", forbidden /* Teredo client ^0 = 255.255.255.255 */},
		}},
		{azure, []row{
			{"168.63.129.15", public}, {"168.63.129.16", forbidden}, {"168.63.129.17", public},
			{"::ffff:168.63.129.16", forbidden}, {"::ffff:0:a83f:8110", forbidden}, {"::a83f:8110", forbidden},
			{"64:ff9b::a83f:8110", forbidden}, {"64:ff9b:1:a83f:81:1000::", forbidden}, {"64:ff9b:1::a83f:8110", forbidden},
			{"2002:a83f:8110::", forbidden}, {"2001:0:a83f:8110::", forbidden}, {"2001:0:808:808::57c0:7eef", forbidden /* Teredo client, inverted */},
		}},
		{neighbours, []row{{"8.8.8.8", public}, {"1.1.1.1", public}, {"2606:4700::1111", public}, {"2a00:1450:4001::1", public}}},

		{ianaV6 + ": ::/128 unspecified (reaches the local host like 0.0.0.0)", []row{{"::", forbidden}}},
		{ianaV6 + ": ::1/128 loopback", []row{{"::1", private}}},
		{ianaV6Space + ": ::/96 IPv4-compatible (deprecated by RFC 4291); never public, as bad as the IPv4 it carries", []row{
			{"::8.8.8.8", private}, {"::169.254.169.254", forbidden}, {"::2", forbidden},
		}},
		{ianaV6 + ": ::ffff:0:0/96 IPv4-mapped; the embedded IPv4 decides", []row{
			{"::ffff:0.0.0.0", forbidden}, {"::ffff:8.8.8.8", public}, {"::ffff:10.0.0.1", private}, {"::ffff:127.0.0.1", private},
			{"::ffff:169.254.169.254", forbidden}, {"::ffff:224.0.0.1", forbidden},
		}},
		{"RFC 2765 (SIIT) ::ffff:0:0:0/96 IPv4-translated: never public, as bad as the IPv4 it carries", []row{
			{"::ffff:0:a9fe:a9fe", forbidden}, {"::ffff:0:7f00:1", private}, {"::ffff:0:808:808", private}, {"::ffff:0:e000:1", forbidden},
		}},
		{ianaV6 + ": 64:ff9b::/96 IPv4-IPv6 translation (globally reachable); " + rfc6052 + ": the embedded IPv4 decides", []row{
			{"64:ff9b::808:808", public}, {"64:ff9b::a00:1", private}, {"64:ff9b::7f00:1", private},
			{"64:ff9b::a9fe:a9fe", forbidden}, {"64:ff9b::e000:1", forbidden}, {"64:ff9b::", forbidden},
		}},
		{ianaV6 + ": 64:ff9b:1::/48 IPv4-IPv6 translation, local use; " + rfc6052 + ": forbidden when any offset carries a forbidden IPv4", []row{
			{"64:ff9b:1::", private}, {"64:ff9b:1::808:808", private}, {"64:ff9b:1::a9fe:a9fe", forbidden},
			{"64:ff9b:1:a9fe:a9:fe00::", forbidden}, {"64:ff9b:1:808:8:800::", private},
			{"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", forbidden /* 255.255.255.255 at every offset */},
		}},
		{ianaV6Space + ": ::/8 outside the special-purpose blocks", []row{
			{"::fffe:ffff:ffff", private}, {"::1:0:0:0", private}, {"64:ff9b::1:0:0", private},
			{"64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", private}, {"64:ff9b:2::", private}, {"ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", private},
		}},
		{ianaV6 + ": 100::/64 discard-only (RFC 6666)", []row{{"100::", private}, {"100::ffff:ffff:ffff:ffff", private}}},
		{ianaV6 + ": 100:0:0:1::/64 dummy IPv6 prefix (RFC 9780)", []row{{"100:0:0:1::", private}, {"100:0:0:1:ffff:ffff:ffff:ffff", private}}},
		{ianaV6Space + ": 100::/8, 200::/7, 400::/6, 800::/5, 1000::/4", []row{
			{"100:0:0:2::", private}, {"1ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", private}, {"200::", private}, {"400::", private},
			{"800::", private}, {"1000::", private}, {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", private}, {"2000::", public},
		}},
		{ianaV6 + ": 2001::/23 IETF protocol assignments (not globally reachable), with every entry inside it", []row{
			{"2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", public}, {"2001:1::", private}, {"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", private}, {"2001:200::", public},
			{"2001:1::1", private /* port control protocol anycast */}, {"2001:1::2", private /* TURN anycast */}, {"2001:1::3", private /* DNS-SD SRP anycast */},
			{"2001:2::", private /* benchmarking 2001:2::/48 */}, {"2001:2:0:ffff:ffff:ffff:ffff:ffff", private},
			{"2001:3::1", private /* AMT 2001:3::/32 */}, {"2001:4:112::1", private /* AS112-v6 2001:4:112::/48 */},
			{"2001:10::1", private /* deprecated ORCHID 2001:10::/28 */}, {"2001:20::1", private /* ORCHIDv2 2001:20::/28 */}, {"2001:30::1", private /* DRIP DETs 2001:30::/28 */},
		}},
		{ianaV6 + ": 2001::/32 Teredo (RFC 4380); private, forbidden when the server or the (inverted) client IPv4 is", []row{
			{"2001:0:808:808:ffff:ffff:f7f7:f7f7", private}, {"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", forbidden /* client ^ffffffff = 0.0.0.0 */},
			{"2001:0:a9fe:a9fe::", forbidden}, {"2001:0:808:808::5601:5601", forbidden},
		}},
		{ianaV6 + ": 2001:db8::/32 documentation", []row{
			{"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", public}, {"2001:db8::", private}, {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", private}, {"2001:db9::", public},
		}},
		{ianaV6 + ": 2002::/16 6to4; the IPv4 in bits 16-48 decides", []row{
			{"2002:808:808::", public}, {"2002:a00:1::", private}, {"2002:7f00:1::1", private},
			{"2002:a9fe:a9fe::", forbidden}, {"2002::", forbidden}, {"2002:e000:1::", forbidden},
			{"2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", public}, {"2003::", public},
		}},
		{ianaV6 + ": 2620:4f:8000::/48 direct delegation AS112 service (globally reachable)", []row{{"2620:4f:8000::1", public}}},
		{ianaV6 + ": 3fff::/20 documentation (RFC 9637)", []row{
			{"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", public}, {"3fff::", private}, {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", private},
			{"3fff:1000::", public}, {"3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", public},
		}},
		{ianaV6Space + ": 4000::/3, 6000::/3, 8000::/3, a000::/3, c000::/3, e000::/4, f000::/5, f800::/6, fe00::/9", []row{
			{"4000::", private}, {"6000::", private}, {"8000::", private}, {"a000::", private}, {"c000::", private},
			{"e000::", private}, {"f000::", private}, {"f800::", private}, {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", private},
			{"fe00::", private}, {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", private},
		}},
		{ianaV6 + ": 5f00::/16 SRv6 segment identifiers (RFC 9602)", []row{
			{"5f00::", private}, {"5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", private}, {"5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", private}, {"5f01::", private},
		}},
		{ianaV6 + ": fc00::/7 unique-local", []row{
			{"fc00::", private}, {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", private}, {"fd00::1", private},
		}},
		{aws + ": the whole unique-local /48 fd00:ec2::/48 of the VPC services", []row{
			{"fd00:ec1:ffff:ffff:ffff:ffff:ffff:ffff", private}, {"fd00:ec2::", forbidden},
			{"fd00:ec2::254", forbidden}, {"fd00:ec2::253", forbidden}, {"fd00:ec2::123", forbidden}, {"fd00:ec2::255", forbidden},
			{"fd00:ec2:0:ffff:ffff:ffff:ffff:ffff", forbidden}, {"fd00:ec2:1::", private}, {"fd00:ec2:1::254", private},
		}},
		{eks, []row{{"fd00:ec2::23", forbidden}, {"fd00:ec2::22", forbidden}, {"fd00:ec2::24", forbidden}}},
		{gcp, []row{{"fd20:ce::254", forbidden}, {"fd20:ce::253", private}, {"fd20:ce::255", private}}},
		{oci, []row{{"fd00:c1::a9fe:a9fe", forbidden}, {"fd00:c1::a9fe:a9fd", private}, {"fd00:c1::a9fe:a9ff", private}}},
		{scaleway, []row{{"fd00:42::42", forbidden}, {"fd00:42::41", private}, {"fd00:42::43", private}, {"169.254.42.42", forbidden}}},
		{akamai, []row{{"fd00:a9fe:a9fe::1", forbidden}, {"fd00:a9fe:a9fe::", private}, {"fd00:a9fe:a9fe::2", private}}},
		{openstack, []row{{"fe80::a9fe:a9fe", forbidden}}},
		{ianaV6 + ": fe80::/10 link-local unicast", []row{
			{"fe80::", forbidden}, {"fe80::1", forbidden}, {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", forbidden},
		}},
		{ianaV6Space + ": fec0::/10 site-local (deprecated by RFC 3879)", []row{
			{"fec0::", private}, {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", private},
		}},
		{ianaV6Mcast + ": ff00::/8", []row{
			{"ff00::", forbidden}, {"ff02::1", forbidden}, {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", forbidden},
		}},
		{zones, []row{{"fe80::1%eth0", forbidden}, {"2606:4700::1111%eth0", public}, {"::1%lo", private}, {"::ffff:10.0.0.1%eth0", private}}},
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
	for _, g := range groups {
		for _, tt := range g.rows {
			addr := netip.MustParseAddr(tt.addr)
			t.Run(tt.addr, func(t *testing.T) {
				if got := netpolicy.Classify(addr); got != tt.class {
					t.Fatalf("Classify(%s) = %v, want %v (source: %s)", tt.addr, got, tt.class, g.source)
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
	for _, s := range []string{"::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::", "fd00:ec2::254", "fe80::1", "::1", "2606:4700::1111", "64:ff9b:1::a9fe:a9fe", "2001:0:808:808::5601:5601",
		"::ffff:168.63.129.16", "fd00:ec2::23", "fd20:ce::254", "5f00::1", "3fff::1", "100::1", "2001:2::1",
		"fd00:c1::a9fe:a9fe", "fd00:42::42", "fd00:a9fe:a9fe::1", "fd00:ec2:0:ffff::1"} {
		b := netip.MustParseAddr(s).As16()
		f.Add(b[:])
	}
	hosts, _ := netpolicy.ParsePrivateHosts("wiki.corp.example")
	listed := netpolicy.NewRules(gate.SelfHosted, hosts)
	forbiddenRanges := prefixes("0.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "255.255.255.255/32",
		"168.63.129.16/32", "192.0.0.192/32", "100.100.100.200/32",
		"fe80::/10", "ff00::/8", "fd00:ec2::/48", "fd20:ce::254/128", "fd00:c1::a9fe:a9fe/128", "fd00:42::42/128", "fd00:a9fe:a9fe::1/128")
	// IPv6 ranges that are never public: the blocks IANA marks not
	// globally reachable inside 2000::/3, and everything outside it except
	// the well-known NAT64 prefix (judged by its IPv4).
	neverPublic := prefixes("2001::/23", "2001:db8::/32", "3fff::/20")
	globalUnicast, nat64 := netip.MustParsePrefix("2000::/3"), netip.MustParsePrefix("64:ff9b::/96")
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
			if class == public && plain.Is6() && (!globalUnicast.Contains(plain) && !nat64.Contains(plain) || contains(neverPublic, plain)) {
				t.Fatalf("Classify(%s) = public, outside the globally reachable IPv6 space", addr)
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

func prefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

func contains(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// TestCloudEndpoints: every row of the cloud table lies inside the
// unique-local range (elsewhere another rule decides), names its vendor,
// service and source, and is forbidden from its first to its last
// address, on every edition, listed host or not, while the unique-local
// addresses just outside it stay private.
func TestCloudEndpoints(t *testing.T) {
	ula := netip.MustParsePrefix("fc00::/7")
	hosts, _ := netpolicy.ParsePrivateHosts("wiki.corp.example")
	listed := netpolicy.NewRules(gate.SelfHosted, hosts)
	rows := netpolicy.CloudEndpoints()
	if len(rows) < 5 {
		t.Fatalf("%d cloud rows", len(rows))
	}
	for _, e := range rows {
		p := netip.MustParsePrefix(e.Prefix)
		if !ula.Contains(p.Addr()) || p.Bits() < 7 || e.Vendor == "" || e.Service == "" || e.Source == "" {
			t.Errorf("row %+v: outside fc00::/7 or without vendor, service or source", e)
		}
		first, last := p.Masked().Addr(), lastAddr(p)
		for _, a := range []netip.Addr{first, last} {
			if got := netpolicy.Classify(a); got != forbidden {
				t.Errorf("%s (%s) = %v, want forbidden", a, e.Vendor, got)
			}
			if err := listed.Check("wiki.corp.example", a); !errors.Is(err, netpolicy.ErrBlocked) {
				t.Errorf("%s (%s) passes for a listed host", a, e.Vendor)
			}
		}
		for _, a := range []netip.Addr{first.Prev(), last.Next()} {
			if got := netpolicy.Classify(a); ula.Contains(a) && got != private && !inAnyRow(rows, a) {
				t.Errorf("%s, next to %s (%s), = %v, want private", a, e.Prefix, e.Vendor, got)
			}
		}
	}
	// The table is a copy: changing it changes nothing.
	rows[0].Prefix = "fd00::/8"
	if netpolicy.CloudEndpoints()[0].Prefix == "fd00::/8" || netpolicy.Classify(netip.MustParseAddr("fd00::1")) != private {
		t.Error("CloudEndpoints is not a copy")
	}
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As16()
	for i := p.Bits(); i < 128; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	return netip.AddrFrom16(b)
}

func inAnyRow(rows []netpolicy.CloudEndpoint, a netip.Addr) bool {
	for _, e := range rows {
		if netip.MustParsePrefix(e.Prefix).Contains(a) {
			return true
		}
	}
	return false
}
