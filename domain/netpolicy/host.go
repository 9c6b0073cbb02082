package netpolicy

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// Errors of [NormalizeHost]. Their texts are short and user-safe.
var (
	// ErrEmptyHost is an empty host.
	ErrEmptyHost = errors.New("host is empty")
	// ErrInvalidHost is a host that is neither a valid (internationalised)
	// domain name nor an IP address.
	ErrInvalidHost = errors.New("host is not a valid domain name")
	// ErrAmbiguousHost is a numeric host other than a canonical dotted-quad
	// IPv4 address (2130706433, 0x7f.1, 017.0.0.1, 127.1): resolvers read
	// these differently, so what was checked may not be what is dialled.
	ErrAmbiguousHost = errors.New("host is an ambiguous numeric address")
	// ErrHostZone is an IPv6 address with a zone id, which only has a
	// meaning on the machine that dials.
	ErrHostZone = errors.New("host must not contain an IPv6 zone")
)

// hostProfile is the strict IDNA 2008 / UTS 46 lookup profile with STD3
// rules and DNS length checks, so the ASCII form is a valid DNS name.
var hostProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.VerifyDNSLength(true),
	idna.StrictDomainName(true),
)

// NormalizeHost returns the one spelling under which a host is compared and
// dialled: an IP address in its canonical form (IPv6 without brackets), or a
// domain name in lowercase ASCII (punycode) without a trailing dot. The
// numeric check runs after the IDNA mapping, because mapping turns
// fullwidth digits and ideographic full stops into an IPv4 address.
func NormalizeHost(host string) (string, error) {
	if host == "" {
		return "", ErrEmptyHost
	}
	if strings.Contains(host, ":") {
		if strings.Contains(host, "%") {
			return "", ErrHostZone
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return "", ErrInvalidHost
		}
		return a.String(), nil
	}
	h, err := hostProfile.ToASCII(host)
	if err != nil {
		return "", ErrInvalidHost
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" || strings.HasSuffix(h, ".") {
		return "", ErrInvalidHost
	}
	if endsInNumber(h) {
		a, err := netip.ParseAddr(h)
		if err != nil || !a.Is4() || a.String() != h {
			return "", ErrAmbiguousHost
		}
	}
	return h, nil
}

// endsInNumber follows the WHATWG URL standard: a host whose last label is
// decimal digits or 0x-prefixed hex is parsed as IPv4 by browsers and by
// inet_aton, never looked up in DNS.
func endsInNumber(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if rest, ok := strings.CutPrefix(last, "0x"); ok {
		return rest == "" || isHex(rest)
	}
	return isDigits(last)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func quote(s string) string { return strconv.Quote(s) }
