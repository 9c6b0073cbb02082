package repository

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/field"
	"golang.org/x/text/unicode/norm"
)

// MaxNameLen is the longest repository name ("acme/api"), in
// characters after normalisation.
const MaxNameLen = 200

// confusableScripts are the scripts whose letters look most alike (Latin
// "a", Cyrillic "а", Greek "α"; Latin "o", Cyrillic "о", Greek "ο"): a
// name may use letters of one of them, never of two.
var confusableScripts = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"Latin", unicode.Latin},
	{"Greek", unicode.Greek},
	{"Cyrillic", unicode.Cyrillic},
}

// ParseName returns the repository name as it is stored, or a
// *field.Error for "name". [New] applies it; a stored name is held to
// the part of it that keeps the name safe to show ([checkStoredName]).
// The rule for look-alikes (docs/input.md):
//
//   - valid UTF-8, normalised to NFC: a name typed with a precomposed "é"
//     and one with "e" and a combining accent are the same name (so the
//     second is name_taken);
//   - 1–[MaxNameLen] characters, no leading or trailing white space;
//   - printable characters only (unicode.IsPrint): no NUL or other control
//     character, no format character (bidi overrides and isolates,
//     zero-width spaces and joiners, soft hyphen), no space but the ASCII
//     one;
//   - no compatibility character: the name must be its own NFKC form, so
//     full-width "ａｃｍｅ/ａｐｉ", ligatures ("ﬁ"), super- and subscripts
//     and the like are refused rather than shown as look-alikes of
//     "acme/api";
//   - letters of at most one of the Latin, Greek and Cyrillic scripts
//     (the mixed-script confusables, such as "acme/аpi" with a Cyrillic
//     "а"); other scripts mix freely with each other and with one of
//     these.
//
// Case is kept and significant: "Acme/API" and "acme/api" are two names,
// as they are on code hosts that are case-sensitive.
func ParseName(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", nameError("must be valid UTF-8")
	}
	s = norm.NFC.String(s)
	switch n := utf8.RuneCountInString(s); {
	case strings.TrimSpace(s) == "":
		return "", nameError("is required")
	case n > MaxNameLen:
		return "", nameError(fmt.Sprintf("must be at most %d characters", MaxNameLen))
	case strings.TrimSpace(s) != s:
		return "", nameError("must not begin or end with white space")
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return "", nameError(fmt.Sprintf("must contain printable characters only (not %U)", r))
		}
	}
	if !norm.NFKC.IsNormalString(s) {
		return "", nameError("must not contain compatibility characters (full-width forms, ligatures, super- or subscripts)")
	}
	var seen string
	for _, r := range s {
		for _, sc := range confusableScripts {
			if !unicode.Is(sc.table, r) {
				continue
			}
			if seen != "" && seen != sc.name {
				return "", nameError("must not mix " + seen + " and " + sc.name + " letters (they look alike)")
			}
			seen = sc.name
		}
	}
	return s, nil
}

func nameError(reason string) error { return &field.Error{Field: "name", Reason: reason} }

// checkStoredName is what [UnmarshalRepositoryFromDatabase] holds a stored
// name to: what it takes to show the name safely wherever it is shown (the
// admin pages, the API's JSON, the CLI's terminal), which every name met
// before [ParseName] existed too (the API took 1 to [MaxNameLen]
// characters): valid UTF-8, not empty, at most [MaxNameLen] characters,
// no control character (NUL, the C0 and C1 controls and DEL: a terminal
// escape, a line break in a log) and no bidirectional control (the
// embeddings, overrides, isolates and marks, which reorder the text
// around the name on a page). The newer parts of ParseName, the NFC form,
// the white space at the ends, the format and compatibility characters
// and the mixed scripts, keep look-alikes out of new names; a name stored
// before them is shown as it was stored.
func checkStoredName(s string) error {
	switch {
	case !utf8.ValidString(s):
		return nameError("stored name is not valid UTF-8")
	case s == "":
		return nameError("stored name is empty")
	case utf8.RuneCountInString(s) > MaxNameLen:
		return nameError(fmt.Sprintf("stored name is longer than %d characters", MaxNameLen))
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return nameError(fmt.Sprintf("stored name has a control character (%U)", r))
		}
	}
	return nil
}
