package tool

import (
	"strings"
	"testing"
)

// TestECMAPatterns: each construct of the translation, by what it
// matches (ECMA-262's meaning) or why it is refused.
func TestECMAPatterns(t *testing.T) {
	tests := []struct {
		pattern   string
		match     []string
		noMatch   []string
		refusedAs string
	}{
		{pattern: `^\d\D\w\W$`, match: []string{"1a_-"}, noMatch: []string{"١a_-", "1aé-"}},
		{pattern: `^a\tb\nc\rd\fe\vf$`, match: []string{"a\tb\nc\rd\fe\vf"}},
		{pattern: `\bword\B`, match: []string{"a wordy"}, noMatch: []string{"a word"}},
		{pattern: `^[\s]$`, match: []string{" ", "\u3000", "\ufeff"}, noMatch: []string{"x"}},
		{pattern: `^\S+$`, match: []string{"abc"}, noMatch: []string{"a\u00a0b"}},
		{pattern: `^a\0$`, match: []string{"a\x00"}},
		{pattern: `^\x41\u00e9\u{1F600}?$`, refusedAs: `uses a \u{…} escape`},
		{pattern: `^\x41\u00E9$`, match: []string{"Aé"}, noMatch: []string{"Ae"}},
		{pattern: `^\/\.\*\+\?\(\)\[\]\{\}\|\^\$\\\-$`, match: []string{`/.*+?()[]{}|^$\-`}},
		{pattern: `^(?<year>\d{4})-(?:\d{2})$`, match: []string{"2026-12"}, noMatch: []string{"26-12"}},
		{pattern: `^a{2}b{1,}c{1,2}{$`, match: []string{"aabcc{"}, noMatch: []string{"abcc{"}},
		{pattern: `^{,3}}$`, match: []string{"{,3}}"}},
		{pattern: `^[a-c[]$`, match: []string{"[", "b"}},
		{pattern: `^[^a]$`, match: []string{"b"}, noMatch: []string{"a"}},
		{pattern: `a*?b+?c??`, match: []string{"bc"}},
		// Leading lookaheads, as zod writes them (e-mail, hostname, password rules).
		{pattern: `^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$`,
			match: []string{"a.b@example.com", "x@y.io"}, noMatch: []string{".a@example.com", "a..b@example.com", "a@b"}},
		{pattern: `^(?=.{1,253}\.?$)[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[-0-9a-zA-Z]{0,61}[0-9a-zA-Z])?)*\.?$`,
			match: []string{"wiki.example.com", "a."}, noMatch: []string{"-a.example", strings.Repeat("a.", 127) + "ab"}},
		{pattern: `^(?=.*\d)(?=.*[a-z])[a-z\d]{8,}$`, match: []string{"abcdefg1"}, noMatch: []string{"abcdefgh", "12345678", "abc1"}},
		{pattern: `^(?=[)])[)]$`, match: []string{")"}},
		{pattern: `^(?=\))\)$`, match: []string{")"}},
		{pattern: `^(?!a)(b|c)$`, match: []string{"b", "c"}, noMatch: []string{"a"}},
		{pattern: `^(?!a)b|c`, refusedAs: "uses lookaround, inline flags or another (? group"},
		{pattern: `^(?=a`, refusedAs: "does not compile"},
		{pattern: `^(?=(?=a))`, refusedAs: "uses lookaround, inline flags or another (? group"},
		{pattern: `^(?=\p{L})`, refusedAs: "uses a Unicode property escape"},
		{pattern: `^(?=a)b(`, refusedAs: "does not compile"},
		{pattern: `[\b]`, refusedAs: `uses \b inside a class`},
		{pattern: `[\S]`, refusedAs: `uses \S inside a class`},
		{pattern: `\01`, refusedAs: "uses an octal escape"},
		{pattern: `\x4`, refusedAs: "has a short hex escape"},
		{pattern: `\xZZ`, refusedAs: "has a malformed hex escape"},
		{pattern: `\udc00`, refusedAs: "uses a surrogate escape"},
		{pattern: `\cJ`, refusedAs: "uses an escape that differs between ECMA-262 and Go"},
		{pattern: `\é`, refusedAs: "uses an escape that differs between ECMA-262 and Go"},
		{pattern: `(?<1a>x)`, refusedAs: "has a malformed group name"},
		{pattern: `(?<>x)`, refusedAs: "has a malformed group name"},
		{pattern: `(?<abc`, refusedAs: "has a malformed group name"},
		{pattern: `(?!a)`, refusedAs: "uses lookaround, inline flags or another (? group"},
		{pattern: `(?<!a)`, refusedAs: "uses lookaround, inline flags or another (? group"},
		{pattern: `(?`, refusedAs: "uses lookaround, inline flags or another (? group"},
		{pattern: `[a`, refusedAs: "has an unterminated class"},
		{pattern: `[[.a.]]`, refusedAs: "uses a POSIX class"},
		{pattern: `a**`, refusedAs: "does not compile"},
		{pattern: `\P{L}`, refusedAs: "uses a Unicode property escape"},
		{pattern: `\k<a>`, refusedAs: "uses a backreference"},
	}
	for _, tt := range tests {
		re, why := compileECMAPattern(tt.pattern)
		if why != tt.refusedAs {
			t.Errorf("compileECMAPattern(%q) refused as %q, want %q", tt.pattern, why, tt.refusedAs)
			continue
		}
		for _, s := range tt.match {
			if re == nil || !re.MatchString(s) {
				t.Errorf("%q does not match %q", tt.pattern, s)
			}
		}
		for _, s := range tt.noMatch {
			if re == nil || re.MatchString(s) {
				t.Errorf("%q matches %q", tt.pattern, s)
			}
		}
	}
}

func TestHostnames(t *testing.T) {
	for s, want := range map[string]bool{
		"a": true, "a-b.example": true, "xn--bcher-kva.example": true, "": false, "a.": false, ".a": false,
		"a_b.example": false, "a-.example": false, string(make([]byte, 254)): false,
	} {
		if got := isHostname(s); got != want {
			t.Errorf("isHostname(%q) = %v, want %v", s, got, want)
		}
	}
}
