package egress

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// worstSecret is a kept value the worst-case arguments carry, deep down.
const worstSecret = "ghp_W0rstCaseN3stedB64oFb64oFhexZZ9q"

// worstArg is one adversarial argument of n bytes: base64 of base64 of
// hex of a text in which every decoder applies again (base32, percent,
// entities, escapes, quoted-printable, base85, hex) and the secret sits,
// with repeated patterns; i makes each argument differ so none is
// deduplicated.
func worstArg(i, n int) string {
	inner := fmt.Sprintf("%d %s %s %s %s =41=4B %s %s aGVsbG8gd29ybGQ= ", i,
		worstSecret[:12], url.PathEscape("%41%4B"), "&#65;&#x4B;", `\u0041\x4b\101`,
		base32.StdEncoding.EncodeToString([]byte("JBSWY3DP")), ascii85s("ab85ab85"))
	text := strings.Repeat(inner, 2) + worstSecret
	s := base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte(hex.EncodeToString([]byte(text))))))
	for len(s) < n {
		s += " " + s
	}
	return s[:n]
}

// worstArgs are 20 properties of 500 bytes each.
func worstArgs() []string {
	args := make([]string, 20)
	for i := range args {
		args[i] = worstArg(i, 500)
	}
	return args
}

// capsSegments are six encodings, each of which a different decoder
// reads: every view of the text has five more to decode, so the text
// unfolds into some 50 views (with a seventh into MaxViews, and
// anything more passes the cap).
var capsSegments = []string{
	base64.StdEncoding.EncodeToString([]byte("hello world base")), "JBSWY3DPEHPK3PXP", ascii85s("ab85ab85"),
	hex.EncodeToString([]byte("hexhexhex")), "%41%4B%49", "&#65;&#75;",
}

// capsArg is the seven segments, pad bytes of ordinary words and the
// worst-case secret.
func capsArg(pad int) string {
	words := strings.Repeat("webhook retry backoff jitter ", pad/29+1)[:pad]
	return strings.Join(capsSegments, " ") + " " + words + " " + worstSecret
}

// worstSmallArgs is one argument that unfolds as far as the caps allow
// without passing them: the most views (MaxViews) with the most bytes
// (the largest padding under MaxViewBytes).
func worstSmallArgs() []string {
	best := capsArg(0)
	for pad := 0; pad < MaxViewBytes; pad += 64 {
		arg := capsArg(pad)
		if _, err := Views([]string{arg}); err != nil {
			break
		}
		best = arg
	}
	return []string{best}
}

// fullTaint keeps MaxValues values: random 40-character ones and the
// worst-case secret.
func fullTaint() *Taint {
	tk := NewTaint()
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	tk.Add(worstSecret)
	for tk.Len() < MaxValues {
		b := make([]byte, 40)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		tk.Add(string(b))
	}
	return tk
}

func withinCaps(t *testing.T, views []string, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrTooManyViews) || views != nil {
			t.Fatalf("Views: %v with %d views", err, len(views))
		}
		return
	}
	size := 0
	for _, v := range views {
		size += len(v)
	}
	if len(views) > MaxViews || size > MaxViewBytes {
		t.Fatalf("%d views of %d bytes, above the caps (%d, %d)", len(views), size, MaxViews, MaxViewBytes)
	}
}

// TestWorstCaseBounded: the most adversarial arguments, against a taint
// of MaxValues values, finish within the caps and are not admitted.
// Timing is BenchmarkAdmitWorst's.
func TestWorstCaseBounded(t *testing.T) {
	tk := fullTaint()
	if tk.Len() != MaxValues {
		t.Fatalf("taint keeps %d values", tk.Len())
	}
	if tk.Add("one-more-value-beyond-MaxValues-1234567") != 0 {
		t.Fatal("a value beyond MaxValues was kept")
	}
	for name, args := range map[string][]string{"20x500": worstArgs(), "at-caps": worstSmallArgs()} {
		tk := fullTaint()
		views, err := Views(tk.roots(args))
		withinCaps(t, views, err)
		size := 0
		for _, v := range views {
			size += len(v)
		}
		t.Logf("%s: %d views of %d bytes, err %v", name, len(views), size, err)
		if name == "at-caps" && (err != nil || len(views) < MaxViews/2 || size < MaxViewBytes/2) {
			t.Errorf("at-caps: %d views of %d bytes (%v), not near the caps", len(views), size, err)
		}
		admitted := err == nil && tk.admit(args, views)
		if admitted {
			t.Errorf("%s: worst-case arguments carrying a kept value admitted", name)
		}
		// Admit returns on the roots alone too (what a caller that
		// ignored the error would pass).
		_ = tk.admit(args, tk.roots(args))
	}
	// The nesting is real: the secret is three decodings down, and a
	// run of one such argument is read down to it.
	single := NewTaint()
	single.Add(worstSecret)
	arg := worstArg(0, 4000)
	if strings.Contains(arg, worstSecret[12:]) {
		t.Fatal("the worst-case argument holds the secret in plain")
	}
	views, err := Views([]string{arg})
	if err != nil {
		t.Logf("single 4000-byte argument: %v", err)
	} else if single.admit([]string{arg}, views) {
		t.Error("nested secret admitted")
	}
}

// TestOverflowedTaintAdmitsNothing: a run that saw more than MaxValues
// values blocks every call, ordinary ones too.
func TestOverflowedTaintAdmitsNothing(t *testing.T) {
	tk := fullTaint()
	if !check(tk, "retry policy") {
		t.Fatal("full (not overflowed) taint blocks an ordinary term")
	}
	tk.Add("one-more-value-beyond-MaxValues-1234567")
	if check(tk, "retry policy") {
		t.Error("overflowed taint admits a call")
	}
}
