// Package id holds the one rule for identifiers: ids are UUIDs in their
// canonical form, 8-4-4-4-12 lowercase hexadecimal, so that they compare
// as strings and a malformed id never reaches a query.
package id

// Valid reports whether s is a UUID in canonical lowercase form.
func Valid(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// Parse returns the canonical form of a UUID given in any letter case,
// and whether s is one.
func Parse(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'F' {
			b[i] = c + ('a' - 'A')
		}
	}
	out := string(b)
	if !Valid(out) {
		return "", false
	}
	return out, true
}
