package web

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// refusedInput names the first form field or query parameter (sorted by
// name) whose name or a value holds a NUL byte or invalid UTF-8, with the
// reason; "" when there is none. PostgreSQL stores neither in text, and
// no field of any page needs them (docs/input.md).
func refusedInput(values url.Values) (field, reason string) {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, s := range append([]string{name}, values[name]...) {
			switch {
			case strings.ContainsRune(s, 0):
				return shownName(name), "must not contain a NUL byte"
			case !utf8.ValidString(s):
				return shownName(name), "must be valid UTF-8"
			}
		}
	}
	return "", ""
}

// shownName is a field's name as the refusal page shows it: quoted (a NUL
// or invalid byte escaped), at most 64 characters.
func shownName(name string) string {
	if r := []rune(strings.ToValidUTF8(name, "\uFFFD")); len(r) > 64 {
		name = string(r[:64]) + "…"
	}
	return strconv.Quote(name)
}

// refuseInput answers 422 with the refusal page when values hold a field
// refusedInput finds, and reports whether it did: nothing is read or
// stored then.
func (u *UI) refuseInput(w http.ResponseWriter, r *http.Request, c *caller, values url.Values, what string) bool {
	field, reason := refusedInput(values)
	if field == "" {
		return false
	}
	u.render(w, r, http.StatusUnprocessableEntity, "message", c, messagePage{Heading: "Refused",
		Text: "The " + what + " " + field + " " + reason + ". Nothing was changed."})
	return true
}
