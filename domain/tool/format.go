package tool

import (
	"net/netip"
	"strings"
	"time"
)

// knownFormats are the values of "format" that are enforced (JSON Schema
// 2020-12, section 7.3, with RFC 3339, RFC 4122, RFC 5321, RFC 3986 and
// RFC 1123 as the syntax). Any other format is an annotation, as 2020-12
// treats it by default: accepted, not checked, not shown to the model,
// and named in the tool's discovery warning.
var knownFormats = map[string]func(string) bool{
	"date-time": isDateTime,
	"date":      isDate,
	"time":      isTime,
	"uuid":      isUUID,
	"email":     isEmail,
	"uri":       isURI,
	"ipv4":      isIPv4,
	"ipv6":      isIPv6,
	"hostname":  isHostname,
}

// isDateTime is RFC 3339's date-time: full-date "T" full-time, the "T"
// and "Z" in either case.
func isDateTime(s string) bool {
	i := strings.IndexAny(s, "Tt")
	return i == 10 && isDate(s[:i]) && isFullTime(s[i+1:])
}

// isDate is RFC 3339's full-date, a real calendar day.
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// isTime is RFC 3339's partial-time with the offset optional: JSON Schema
// asks for full-time, but zod's and pydantic's time fields validate (and
// their authors send) times without an offset, so both are accepted.
func isTime(s string) bool {
	if isFullTime(s) {
		return true
	}
	return isPartialTime(s)
}

// isFullTime is partial-time followed by "Z" or ±hh:mm.
func isFullTime(s string) bool {
	if n := len(s); n > 0 && (s[n-1] == 'Z' || s[n-1] == 'z') {
		return isPartialTime(s[:n-1])
	}
	if n := len(s); n >= 6 && (s[n-6] == '+' || s[n-6] == '-') && s[n-3] == ':' {
		return isPartialTime(s[:n-6]) && twoDigits(s[n-5:n-3], 23) && twoDigits(s[n-2:], 59)
	}
	return false
}

// isPartialTime is hh:mm:ss with an optional fraction; second 60 is a
// leap second.
func isPartialTime(s string) bool {
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return false
	}
	if !twoDigits(s[0:2], 23) || !twoDigits(s[3:5], 59) || !twoDigits(s[6:8], 60) {
		return false
	}
	frac := s[8:]
	if frac == "" {
		return true
	}
	if frac[0] != '.' || len(frac) == 1 {
		return false
	}
	return allBytes(frac[1:], isDigit)
}

func twoDigits(s string, max int) bool {
	return len(s) == 2 && isDigit(s[0]) && isDigit(s[1]) && int(s[0]-'0')*10+int(s[1]-'0') <= max
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func allBytes(s string, f func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !f(s[i]) {
			return false
		}
	}
	return true
}

// isUUID is RFC 4122's string form, 8-4-4-4-12 hex digits, any version.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

// isEmail is RFC 5321's Mailbox in its common form: a dot-atom local part
// of at most 64 characters, "@", and a hostname or an address literal.
// Quoted local parts are refused (no generator's validator accepts them
// either). Whatever passes is still never sent: the argument scan blocks
// e-mail addresses (the discovery warning says so).
func isEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if at <= 0 || at > 64 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	for _, atom := range strings.Split(local, ".") {
		if atom == "" || !allBytes(atom, isAtext) {
			return false
		}
	}
	if strings.HasPrefix(domain, "[") && strings.HasSuffix(domain, "]") {
		lit := domain[1 : len(domain)-1]
		if v6, ok := strings.CutPrefix(lit, "IPv6:"); ok {
			return isIPv6(v6)
		}
		return isIPv4(lit)
	}
	return isHostname(domain)
}

func isAtext(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}

// isURI is RFC 3986's URI: a scheme, ":", and only characters the RFC
// allows, every "%" followed by two hex digits.
func isURI(s string) bool {
	colon := strings.IndexByte(s, ':')
	if colon < 1 {
		return false
	}
	if !isScheme(s[:colon]) {
		return false
	}
	rest := s[colon+1:]
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case c == '%':
			if i+2 >= len(rest) || !isHex(rest[i+1]) || !isHex(rest[i+2]) {
				return false
			}
			i += 2
		case isDigit(c) || isAlpha(c) || strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// isScheme is RFC 3986's scheme: a letter, then letters, digits, "+",
// "-" and ".".
func isScheme(s string) bool {
	return isAlpha(s[0]) && allBytes(s, func(c byte) bool {
		return isDigit(c) || isAlpha(c) || c == '+' || c == '-' || c == '.'
	})
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isIPv4 is the dotted-quad form, no leading zeros.
func isIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

// isIPv6 is RFC 4291's text form, without a zone.
func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && a.Zone() == "" && strings.Contains(s, ":")
}

// isHostname is RFC 1123's host name: labels of 1–63 letters, digits and
// hyphens, not starting or ending with a hyphen, at most 253 characters.
func isHostname(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		if !allBytes(l, func(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' }) {
			return false
		}
	}
	return true
}
