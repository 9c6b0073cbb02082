package secrets

import (
	"regexp"
	"strings"
	"testing"
)

// allowRegexps returns every allowlist regexp of the rule file, plain and
// with its literal filter.
func allowRegexps(tb testing.TB) (plain []*regexp.Regexp, filtered []*litRegexp) {
	tb.Helper()
	cfg, err := parseConfig(gitleaksTOML)
	if err != nil {
		tb.Fatal(err)
	}
	specs := []allowSpec{cfg.Global}
	for _, r := range cfg.Rules {
		specs = append(specs, r.Allowlists...)
	}
	for _, a := range specs {
		if len(a.Regexes) == 0 {
			continue
		}
		expr := joinOr(a.Regexes)
		l, err := compileLitRegexp(expr)
		if err != nil {
			tb.Fatal(err)
		}
		plain = append(plain, regexp.MustCompile(expr))
		filtered = append(filtered, l)
	}
	return plain, filtered
}

// allowTargets are the texts allowlists see: every line of the corpus and
// of the samples, and every match of every rule there with its groups
// (the secret and match targets).
func allowTargets(t *testing.T) []string {
	s := newScanner(t)
	texts := []string{readCorpus(t, "planted"), readCorpus(t, "dense"), readCorpus(t, "wiki")}
	for _, sm := range loadSamples(t) {
		texts = append(texts, sm.TPs...)
		texts = append(texts, sm.FPs...)
	}
	var out []string
	for _, text := range texts {
		out = append(out, strings.Split(text, "\n")...)
		low := strings.ToLower(text)
		for _, r := range s.rules {
			if !strings.Contains(low, r.keywords[0]) {
				continue
			}
			for _, m := range r.re.FindAllStringSubmatch(text, -1) {
				out = append(out, m...)
			}
		}
	}
	return append(out,
		"", "true", "TRUE", "xfalsex", "nullx", "xnull", "aaaa", "\u212a\u212a", "${FOO}", "$FOO", "%s", "{{ x }}",
		"${{ secrets.FOO }}", "@FOO@", "/Users/x/a b", "/etc/x", "{12}", "access_id=1", "ACCESSOR", "api-version",
		"monkey", "MONKEY", "Monkey", "mONKEY", "keyring", "K\u212aEYRING", "X_Y=\nZ_W=\n", "x.y=\nz.w=", "io.jsonwebtoken : jjwt",
		"import { a } from 'b'", "--mount=type=secret,id=x", "se\u017fsion", "a:jar:", "clientapi:jar:1")
}

// TestLitRegexpMatchesRegexp: the literal filter never changes an
// allowlist's answer.
func TestLitRegexpMatchesRegexp(t *testing.T) {
	plain, filtered := allowRegexps(t)
	targets := allowTargets(t)
	for i := range plain {
		for _, s := range targets {
			if got, want := filtered[i].MatchString(s), plain[i].MatchString(s); got != want {
				t.Errorf("%s\nMatchString(%q) = %v, the regexp says %v", plain[i], s, got, want)
			}
		}
	}
	if testing.Verbose() {
		for i, f := range filtered {
			t.Logf("%.60s: always %v, filtered %v", plain[i], f.always != nil, f.filtered != nil)
		}
	}
}

func FuzzLitRegexp(f *testing.F) {
	for _, s := range []string{"true", "${FOO}", "access_id", "\u212aEYRING", "A_B=\nC=\n", "a:jar:", "x"} {
		f.Add(s)
	}
	plain, filtered := allowRegexps(f)
	f.Fuzz(func(t *testing.T, s string) {
		for i := range plain {
			if got, want := filtered[i].MatchString(s), plain[i].MatchString(s); got != want {
				t.Fatalf("%s\nMatchString(%q) = %v, the regexp says %v", plain[i], s, got, want)
			}
		}
	})
}
