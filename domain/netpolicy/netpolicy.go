// Package netpolicy holds the address rules of MC1: which IP addresses an
// MCP server may resolve to. The same [Rules] judge a URL when it is saved
// and every address inside the dialer, so DNS rebinding meets the same
// rules as registration.
package netpolicy

import (
	"errors"
	"net/netip"
	"slices"
	"strings"

	"github.com/codelotse/codelotse/domain/gate"
)

// Class is how an address is treated. The zero Class is never returned.
type Class struct{ s string }

// The classes of [Classify].
var (
	// ClassPublic may always be reached.
	ClassPublic = Class{"public"}
	// ClassPrivate may be reached only through a host listed on a
	// self-hosted instance.
	ClassPrivate = Class{"private"}
	// ClassForbidden may never be reached: link-local, multicast,
	// 0.0.0.0/8, limited broadcast and cloud metadata addresses, also when
	// embedded in IPv6.
	ClassForbidden = Class{"forbidden"}
)

// String returns "public", "private" or "forbidden".
func (c Class) String() string { return c.s }

// worse returns the stricter of two classes.
func worse(a, b Class) Class {
	rank := func(c Class) int {
		switch c {
		case ClassPublic:
			return 0
		case ClassPrivate:
			return 1
		}
		return 2
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

func prefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

var (
	// forbidden4 are never reachable: "this network" 0.0.0.0/8,
	// link-local 169.254.0.0/16 (AWS, Azure and Google Cloud metadata at
	// 169.254.169.254, EKS Pod Identity at 169.254.170.23), multicast
	// 224.0.0.0/4, limited broadcast 255.255.255.255, and cloud services
	// that sit inside otherwise merely private or public ranges:
	// 192.0.0.192 (Oracle Cloud metadata), 100.100.100.200 (Alibaba Cloud
	// metadata) and 168.63.129.16 (Azure WireServer and host agent, a
	// public-looking address every Azure VM reaches).
	forbidden4 = prefixes("0.0.0.0/8", "169.254.0.0/16", "224.0.0.0/4", "255.255.255.255/32",
		"192.0.0.192/32", "100.100.100.200/32", "168.63.129.16/32")
	private4 = prefixes("10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4")

	// forbidden6 are never reachable: the unspecified address :: (it
	// reaches the local host like 0.0.0.0), link-local fe80::/10 (OpenStack
	// serves its metadata at fe80::a9fe:a9fe there), multicast ff00::/8,
	// and the cloud vendors' endpoints of [cloudForbidden6].
	forbidden6 = append(prefixes("::/128", "fe80::/10", "ff00::/8"), cloudPrefixes()...)
	// private6 are the blocks inside the global unicast range 2000::/3
	// that IANA's IPv6 special-purpose registry marks not globally
	// reachable: IETF protocol assignments 2001::/23 (whole, fail closed:
	// the few globally reachable entries inside it are anycast protocol
	// endpoints, never an MCP server) and the documentation blocks
	// 2001:db8::/32 and 3fff::/20. Everything outside 2000::/3 is private
	// anyway (see [Classify]).
	private6 = prefixes("2001::/23", "2001:db8::/32", "3fff::/20")

	// globalUnicast is the only IPv6 range IANA allocates from; the rest
	// is reserved, special-purpose (discard-only 100::/64, the dummy
	// prefix 100:0:0:1::/64, SRv6 SIDs 5f00::/16), unique-local fc00::/7,
	// site-local fec0::/10, link-local or multicast.
	globalUnicast = netip.MustParsePrefix("2000::/3")

	nat64WellKnown = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local     = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	teredo         = netip.MustParsePrefix("2001::/32")
	ipv4Compatible = netip.MustParsePrefix("::/96")
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96")
)

// CloudEndpoint is a metadata or credential endpoint a cloud vendor serves
// inside the unique-local range fc00::/7, where every other address is
// merely private (reachable through a listed host): an MCP server that
// resolves to one of these must never be reached, on any edition, listed
// or not. Each row names the vendor's documentation it comes from
// (docs/address-table.md has the same table).
type CloudEndpoint struct {
	Prefix  string // the forbidden prefix
	Vendor  string
	Service string
	Source  string // where the vendor documents the address
}

// cloudForbidden6 is the table of [CloudEndpoint]s. Checked and without a
// row, because they document no IPv6 endpoint inside fc00::/7 (their
// IPv4 ones are in forbidden4): Microsoft Azure (IMDS 169.254.169.254,
// WireServer 168.63.129.16), Alibaba Cloud (100.100.100.200),
// DigitalOcean (169.254.169.254), IBM Cloud VPC (169.254.169.254, also
// as api.metadata.cloud.ibm.com), Hetzner, Exoscale and Brightbox
// (169.254.169.254); OpenStack's IPv6 metadata is link-local
// (fe80::a9fe:a9fe) and Scaleway's IPv4 one too (169.254.42.42).
var cloudForbidden6 = []CloudEndpoint{
	// AWS serves every VPC service it puts on IPv6 from one unique-local
	// /48 (instance metadata ::254, Route 53 Resolver ::253, Time Sync
	// ::123, EKS Pod Identity ::23): the whole /48 is forbidden, so a
	// service AWS adds there is covered before this table learns of it.
	{"fd00:ec2::/48", "Amazon Web Services",
		"instance metadata (IMDS) fd00:ec2::254, Route 53 Resolver fd00:ec2::253, Time Sync fd00:ec2::123, EKS Pod Identity Agent fd00:ec2::23 (credentials of pods)",
		"AWS whitepaper IPv6 on AWS, Supporting Amazon VPC services (docs.aws.amazon.com/whitepapers/latest/ipv6-on-aws/supporting-amazon-vpc-services.html); " +
			"Amazon EC2 user guide, Set the time reference (docs.aws.amazon.com/AWSEC2/latest/UserGuide/configure-ec2-ntp.html); " +
			"Amazon EKS user guide, Set up the Amazon EKS Pod Identity Agent (docs.aws.amazon.com/eks/latest/userguide/pod-id-agent-setup.html)"},
	{"fd20:ce::254/128", "Google Cloud", "Compute Engine metadata server (service account tokens) of IPv6-only VMs",
		"Compute Engine docs, About VM metadata / Access VM metadata (cloud.google.com/compute/docs/metadata/querying-metadata)"},
	{"fd00:c1::a9fe:a9fe/128", "Oracle Cloud Infrastructure", "instance metadata (IMDS, instance principal certificates) over IPv6",
		"OCI Python SDK, instance principals security token signer (oci-python-sdk on GitHub), the endpoint the SDK falls back to on IPv6"},
	{"fd00:42::42/128", "Scaleway", "instance metadata API",
		"cloud-init docs, Scaleway datasource (docs.cloud-init.io/en/latest/reference/datasources/scaleway.html)"},
	{"fd00:a9fe:a9fe::1/128", "Akamai Cloud (Linode)", "metadata service (user data, instance token)",
		"cloud-init docs, Akamai datasource (docs.cloud-init.io/en/latest/reference/datasources/akamai.html)"},
}

// CloudEndpoints returns the table of cloud endpoints inside fc00::/7
// that are forbidden (a copy).
func CloudEndpoints() []CloudEndpoint { return slices.Clone(cloudForbidden6) }

func cloudPrefixes() []netip.Prefix {
	out := make([]netip.Prefix, len(cloudForbidden6))
	for i, e := range cloudForbidden6 {
		out[i] = netip.MustParsePrefix(e.Prefix)
	}
	return out
}

func in(ps []netip.Prefix, a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Classify tells whether an address is public, private or forbidden. A
// zone is ignored; IPv4-mapped, NAT64 and 6to4 addresses are judged by the
// IPv4 address they carry, because that is where the packets end up. An
// IPv6 address outside the global unicast range 2000::/3 is never public
// (only the IPv4-mapped and well-known NAT64 forms there can be, through
// the IPv4 address they carry). An
// invalid address is forbidden.
func Classify(a netip.Addr) Class {
	if !a.IsValid() {
		return ClassForbidden
	}
	a = a.WithZone("")
	if a.Is4() || a.Is4In6() {
		return classify4(a.Unmap())
	}
	b := a.As16()
	switch {
	case in(forbidden6, a):
		return ClassForbidden
	case nat64WellKnown.Contains(a):
		return classify4(v4(b[12:16]))
	case ipv4Translated.Contains(a):
		// SIIT's IPv4-translated form (RFC 2765): a translator delivers it
		// to the IPv4 address it carries, so it is never better than that
		// address, and never public.
		return worse(ClassPrivate, classify4(v4(b[12:16])))
	case sixToFour.Contains(a):
		return classify4(v4(b[2:6]))
	case nat64Local.Contains(a):
		// RFC 6052 lets a network carve a /48, /56, /64 or /96 out of the
		// local-use prefix, each carrying the IPv4 address at another
		// offset (byte 8, the u octet, is skipped); we cannot know which,
		// so every offset is judged. Offsets that read 0.x.x.x are left
		// out: any unused offset reads so, and no translator maps to 0/8.
		c := ClassPrivate
		for _, at := range [][4]int{{6, 7, 9, 10}, {7, 9, 10, 11}, {9, 10, 11, 12}, {12, 13, 14, 15}} {
			if b[at[0]] != 0 {
				c = worse(c, classify4(netip.AddrFrom4([4]byte{b[at[0]], b[at[1]], b[at[2]], b[at[3]]})))
			}
		}
		return c
	case teredo.Contains(a):
		// Teredo carries the server's address and the client's address
		// (inverted); neither may be a forbidden one.
		c := worse(ClassPrivate, classify4(v4(b[4:8])))
		return worse(c, classify4(netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})))
	case ipv4Compatible.Contains(a) && a != netip.IPv6Loopback():
		return worse(ClassPrivate, classify4(v4(b[12:16])))
	case in(private6, a) || !globalUnicast.Contains(a):
		return ClassPrivate
	}
	return ClassPublic
}

func v4(b []byte) netip.Addr { return netip.AddrFrom4([4]byte(b)) }

func classify4(a netip.Addr) Class {
	switch {
	case in(forbidden4, a):
		return ClassForbidden
	case in(private4, a):
		return ClassPrivate
	}
	return ClassPublic
}

// Reason says why an address was refused. It names no address, so it may
// be shown to users.
type Reason struct{ s string }

// The reasons of [BlockedError].
var (
	// ReasonPrivate: a private address for a host that is not listed (or
	// an edition that ignores the list).
	ReasonPrivate = Reason{"address is not public"}
	// ReasonForbidden: an address that no configuration allows.
	ReasonForbidden = Reason{"address is never allowed"}
	// ReasonNoAddress: the host resolved to nothing.
	ReasonNoAddress = Reason{"host has no address"}
)

// String returns the user-safe text of the reason.
func (r Reason) String() string { return r.s }

// ErrBlocked matches every [*BlockedError] with [errors.Is]; the API maps
// it to endpoint_not_public.
var ErrBlocked = errors.New("endpoint is not public")

// BlockedError is the refusal of [Rules.Check] and [Rules.CheckAll].
type BlockedError struct {
	// Reason says why, without naming the address.
	Reason Reason
}

// Error implements error.
func (e *BlockedError) Error() string { return "endpoint is not public: " + e.Reason.s }

// Is makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// Rules are the address rules of one instance: its edition and its
// private-host list. The zero Rules refuse every private address.
type Rules struct {
	edition      gate.Edition
	privateHosts PrivateHosts
}

// NewRules combines the edition and the private-host list. On the
// enterprise edition (and a zero edition) the list is ignored.
func NewRules(edition gate.Edition, privateHosts PrivateHosts) Rules {
	return Rules{edition: edition, privateHosts: privateHosts}
}

// Check judges one address that host resolved to. Public addresses pass;
// private ones pass only on a self-hosted instance that lists host;
// forbidden ones never pass. host is compared after [NormalizeHost]; a host
// that does not normalise is treated as unlisted.
func (r Rules) Check(host string, addr netip.Addr) error {
	switch Classify(addr) {
	case ClassPublic:
		return nil
	case ClassPrivate:
		if r.edition == gate.SelfHosted && r.privateHosts.Contains(host) {
			return nil
		}
		return &BlockedError{Reason: ReasonPrivate}
	}
	return &BlockedError{Reason: ReasonForbidden}
}

// CheckAll judges every address a host resolved to; one blocked address
// blocks the host, so a resolver cannot mix a public decoy with a private
// target. An empty list is refused too.
func (r Rules) CheckAll(host string, addrs []netip.Addr) error {
	if len(addrs) == 0 {
		return &BlockedError{Reason: ReasonNoAddress}
	}
	for _, a := range addrs {
		if err := r.Check(host, a); err != nil {
			return err
		}
	}
	return nil
}

// PrivateHosts is the parsed QUAVON_MCP_PRIVATE_HOSTS list. The zero value
// lists nothing.
type PrivateHosts struct {
	hosts []string
}

// ParsePrivateHosts parses the comma-separated environment value: entries
// are trimmed, empty ones dropped, and each is normalised with
// [NormalizeHost]. An entry that does not normalise is an error naming it,
// so a typo stops the instance instead of silently blocking a host.
func ParsePrivateHosts(s string) (PrivateHosts, error) {
	var ph PrivateHosts
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if strings.HasPrefix(e, "[") && strings.HasSuffix(e, "]") {
			e = e[1 : len(e)-1]
		}
		h, err := NormalizeHost(e)
		if err != nil {
			return PrivateHosts{}, &PrivateHostError{Entry: e, Err: err}
		}
		if !ph.contains(h) {
			ph.hosts = append(ph.hosts, h)
		}
	}
	return ph, nil
}

// PrivateHostError is an entry of QUAVON_MCP_PRIVATE_HOSTS that is not a
// valid host name.
type PrivateHostError struct {
	// Entry is the offending entry, trimmed.
	Entry string
	// Err is the [NormalizeHost] error.
	Err error
}

// Error implements error. The entry is quoted so the message stays one line.
func (e *PrivateHostError) Error() string {
	return "invalid private host " + quote(e.Entry) + ": " + e.Err.Error()
}

// Unwrap returns the [NormalizeHost] error.
func (e *PrivateHostError) Unwrap() error { return e.Err }

// Hosts returns a copy of the normalised host names.
func (p PrivateHosts) Hosts() []string { return append([]string(nil), p.hosts...) }

// Contains reports whether host, normalised, is listed. Matching is exact:
// a listed wiki.corp.example does not cover api.wiki.corp.example.
func (p PrivateHosts) Contains(host string) bool {
	if len(p.hosts) == 0 {
		return false
	}
	h, err := NormalizeHost(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if err != nil {
		return false
	}
	return p.contains(h)
}

func (p PrivateHosts) contains(h string) bool { return slices.Contains(p.hosts, h) }
