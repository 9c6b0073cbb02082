package tool_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/tool"
)

func TestSanitizeDescription(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Search the wiki.", "Search the wiki."},
		{"keeps newline and tab", "a\n\tb", "a\n\tb"},
		{"trims", "  a  \n", "a"},
		{"zero width", "a\u200bb\u200cc\u200dd\u200ee\u200ff", "abcdef"},
		{"word joiner and invisible operators", "a\u2060\u2061\u2062\u2063\u2064b", "ab"},
		{"bom and soft hyphen", "\ufeffa\u00adb", "ab"},
		{"bidi overrides", "a\u202a\u202b\u202c\u202d\u202eb", "ab"},
		{"bidi isolates", "a\u2066\u2067\u2068\u2069b", "ab"},
		{"tag characters", "ok\U000E0049\U000E0047\U000E004E\U000E004F\U000E0052\U000E0045\U000E007F", "ok"},
		{"variation selectors", "a\ufe00\ufe0fb\U000E0100\U000E01EFc", "abc"},
		{"controls", "a\x00\x07\x1b[31m\rb\x7f\u0085", "a[31mb"},
		{"other Cf", "a\u0600\u061c\u180e\U0001D173b", "ab"},
		{"hangul fillers", "a\u115f\u1160\u3164\uffa0b", "ab"},
		{"grapheme joiner", "a\u034fb", "ab"},
		{"invalid utf8", "a\xffb", "a\ufffdb"},
		{"keeps visible unicode", "Über 😀 日本 \u2028", "Über 😀 日本"},
		{"emoji zwj sequence loses joiner", "👩\u200d💻", "👩💻"},
		{"only invisible", "\u200b\u200b", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tool.SanitizeDescription(tt.in); got != tt.want {
				t.Errorf("SanitizeDescription(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSanitizeDescriptionCap(t *testing.T) {
	max := limits.MaxToolDescriptionLen
	tests := []struct {
		name    string
		in      string
		wantLen int
	}{
		{"exact", strings.Repeat("é", max), max},
		{"over", strings.Repeat("é", max+10), max},
		{"invisible not counted", strings.Repeat("a\u200b", max), max},
		{"trailing space after cut", strings.Repeat("a", max-1) + " b", max - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tool.SanitizeDescription(tt.in)
			if n := utf8.RuneCountInString(got); n != tt.wantLen {
				t.Errorf("SanitizeDescription(%q) has %d runes, want %d", tt.name, n, tt.wantLen)
			}
			if again := tool.SanitizeDescription(got); again != got {
				t.Errorf("SanitizeDescription not idempotent on %q", tt.name)
			}
		})
	}
}

func TestModelDescription(t *testing.T) {
	long := strings.Repeat("x", limits.MaxToolDescriptionLen+5)
	tests := []struct {
		server, text, want string
	}{
		{"wiki", "Searches pages.", "External read-only context from wiki. Searches pages."},
		{"wiki", "", "External read-only context from wiki."},
		{"wiki", "\u202eevil\u200b", "External read-only context from wiki. evil"},
		{"wi\u200bki", "t", "External read-only context from wiki. t"},
		{"wiki", long, "External read-only context from wiki. " + long[:limits.MaxToolDescriptionLen]},
	}
	for _, tt := range tests {
		t.Run(tt.server, func(t *testing.T) {
			if got := tool.ModelDescription(tt.server, tt.text); got != tt.want {
				t.Errorf("ModelDescription(%q, %q) = %q, want %q", tt.server, tt.text, got, tt.want)
			}
		})
	}
}

func TestInvisibleIsWhatSanitizeRemoves(t *testing.T) {
	for _, r := range []rune{'\u202e', '\u200b', '\u2066', '\ufeff', '\u0007', '\U000e0041', 'a', '<', '\n', '\t', 'é'} {
		removed := tool.SanitizeDescription("a"+string(r)+"b") == "ab"
		if got := tool.Invisible(r); got != removed {
			t.Errorf("Invisible(%U) = %v, but SanitizeDescription removes it: %v", r, got, removed)
		}
	}
}
