package repository

import (
	"errors"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/field"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // "" refused
		reason   string // a part of the refusal's reason
	}{
		{name: "plain", in: "acme/api", want: "acme/api"},
		{name: "case kept", in: "Acme/API", want: "Acme/API"},
		{name: "inner space", in: "acme/my api", want: "acme/my api"},
		{name: "punctuation", in: "acme/api.v2_x-y", want: "acme/api.v2_x-y"},
		{name: "precomposed accent", in: "acme/caf\u00e9", want: "acme/caf\u00e9"},
		{name: "decomposed accent is stored composed", in: "acme/cafe\u0301", want: "acme/caf\u00e9"},
		{name: "Cyrillic alone", in: "\u0430\u043a\u043c\u0435/\u0430\u043f\u0438", want: "\u0430\u043a\u043c\u0435/\u0430\u043f\u0438"},
		{name: "Greek alone", in: "\u03b1\u03b2/\u03b3", want: "\u03b1\u03b2/\u03b3"},
		{name: "Han with Latin", in: "acme/\u6587\u6863", want: "acme/\u6587\u6863"},
		{name: "Japanese with Latin", in: "acme/\u3066\u3059\u3068-docs", want: "acme/\u3066\u3059\u3068-docs"},
		{name: "at the limit", in: strings.Repeat("a", 200), want: strings.Repeat("a", 200)},
		{name: "at the limit once composed", in: strings.Repeat("e\u0301", 200), want: strings.Repeat("\u00e9", 200)},

		{name: "empty", in: "", reason: "is required"},
		{name: "spaces only", in: "   ", reason: "is required"},
		{name: "too long", in: strings.Repeat("a", 201), reason: "at most 200"},
		{name: "invalid UTF-8", in: "acme/\xff", reason: "UTF-8"},
		{name: "leading space", in: " acme/api", reason: "white space"},
		{name: "trailing space", in: "acme/api ", reason: "white space"},
		{name: "trailing tab", in: "acme/api\t", reason: "white space"},
		{name: "trailing newline", in: "acme/api\n", reason: "white space"},
		{name: "trailing no-break space", in: "acme/api\u00a0", reason: "white space"},
		{name: "trailing ideographic space", in: "acme/api\u3000", reason: "white space"},
		{name: "NUL", in: "acme/\x00api", reason: "U+0000"},
		{name: "trailing NUL", in: "acme/api\x00", reason: "U+0000"},
		{name: "inner tab", in: "acme/a\tpi", reason: "U+0009"},
		{name: "DEL", in: "acme/a\x7fpi", reason: "U+007F"},
		{name: "inner no-break space", in: "acme/my\u00a0api", reason: "U+00A0"},
		{name: "right-to-left override", in: "acme/\u202eipa", reason: "U+202E"},
		{name: "right-to-left isolate", in: "acme/\u2067api", reason: "U+2067"},
		{name: "zero-width space", in: "acme/a\u200bpi", reason: "U+200B"},
		{name: "zero-width joiner", in: "acme/a\u200dpi", reason: "U+200D"},
		{name: "soft hyphen", in: "acme/a\u00adpi", reason: "U+00AD"},
		{name: "byte order mark", in: "\ufeffacme/api", reason: "U+FEFF"},
		{name: "full-width letters", in: "\uff41\uff43\uff4d\uff45/\uff41\uff50\uff49", reason: "compatibility"},
		{name: "full-width solidus", in: "acme\uff0fapi", reason: "compatibility"},
		{name: "ligature", in: "acme/\ufb01le", reason: "compatibility"},
		{name: "superscript", in: "acme/api\u00b2", reason: "compatibility"},
		{name: "Kelvin sign is stored as K (canonical)", in: "acme/\u212aelvin", want: "acme/Kelvin"},
		{name: "mathematical bold", in: "acme/\U0001d41a\U0001d429\U0001d422", reason: "compatibility"},
		{name: "Cyrillic a among Latin", in: "acme/\u0430pi", reason: "Latin and Cyrillic"},
		{name: "Greek omicron among Latin", in: "acme/d\u03bfcs", reason: "Latin and Greek"},
		{name: "Latin owner, Cyrillic repository", in: "acme/\u0430\u043f\u0438", reason: "Latin and Cyrillic"},
		{name: "Greek and Cyrillic", in: "\u03b1/\u0430", reason: "Greek and Cyrillic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseName(tt.in)
			if tt.want != "" {
				if err != nil || got != tt.want {
					t.Fatalf("ParseName(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
				}
				return
			}
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != "name" || !strings.Contains(fe.Reason, tt.reason) {
				t.Fatalf("ParseName(%q) = %q, %v; want a name refusal with %q", tt.in, got, err, tt.reason)
			}
			if strings.Contains(fe.Reason, tt.in) && tt.in != "" {
				t.Errorf("the reason %q repeats the name", fe.Reason)
			}
		})
	}
}
