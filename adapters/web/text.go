package web

import (
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/tool"
)

// visible renders text from an MCP server or a user as inert HTML: every
// character is escaped, and each character that the domain's description
// sanitiser would remove (tool.Invisible: bidi overrides and isolates,
// zero-width and other format or control characters) is replaced by a
// visible marker such as [U+202E], so it can neither reorder nor hide what
// the admin reads. Newlines and tabs stay.
func visible(s string) template.HTML {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	start := 0
	flush := func(end int) { b.WriteString(template.HTMLEscapeString(s[start:end])) }
	for i, r := range s {
		if !tool.Invisible(r) {
			continue
		}
		flush(i)
		fmt.Fprintf(&b, `<span class="invisible-char" title="invisible character removed from what the model sees">[U+%04X]</span>`, r)
		start = i + utf8.RuneLen(r)
	}
	flush(len(s))
	return template.HTML(b.String()) // every piece above is escaped or fixed markup
}

// hostOf is a URL's host, for lists.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}
