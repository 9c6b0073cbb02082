package egress

import (
	"errors"
	"strings"
	"testing"
)

// foldedOnly reports whether f holds only the folded alphabet.
func foldedOnly(f []byte) bool {
	for _, c := range f {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// seedAttacks adds every attack case's arguments as a seed.
func seedAttacks(f *testing.F, add func(string, string)) {
	for _, a := range attacks() {
		for _, args := range a.calls {
			second := ""
			if len(args) > 1 {
				second = args[1]
			}
			add(args[0], second)
		}
	}
	for _, a := range residual() {
		add(a.calls[0][0], "")
	}
	add(worstArg(0, 500), worstArg(1, 500))
}

// FuzzViews: Views never panics, stays within MaxViews and MaxViewBytes
// (count and total bytes, the roots included) or returns
// ErrTooManyViews, and every view folds to [a-z0-9] only.
func FuzzViews(f *testing.F) {
	seedAttacks(f, func(a, b string) { f.Add(a, b) })
	f.Fuzz(func(t *testing.T, a, b string) {
		views, err := Views([]string{a, b, a + b})
		if err != nil {
			if !errors.Is(err, ErrTooManyViews) {
				t.Fatalf("unexpected error %v", err)
			}
			if views != nil {
				t.Fatalf("views returned with the error")
			}
			return
		}
		if len(views) > MaxViews {
			t.Fatalf("%d views, above MaxViews", len(views))
		}
		size := 0
		for _, v := range views {
			size += len(v)
			if fv := Fold(v); !foldedOnly(fv) {
				t.Fatalf("Fold(%q) = %q holds bytes outside [a-z0-9]", v, fv)
			}
		}
		if size > MaxViewBytes {
			t.Fatalf("views hold %d bytes, above MaxViewBytes", size)
		}
		if len(views) < 1 || views[0] != a {
			t.Fatalf("the first root is not the first view")
		}
	})
}

// shrinking are the decoders whose output is never longer than their
// input: each replaces an encoding by the fewer bytes it stands for.
var shrinking = map[string]bool{"base64": true, "base32": true, "base85": true, "hex": true, "percent": true, "entities": true, "escapes": true, "quoted-printable": true}

// FuzzDecoders: no decoder or transform panics; a decoder that reports
// no change returns its input; the shrinking decoders never grow it; the
// rotations keep the length.
func FuzzDecoders(f *testing.F) {
	seedAttacks(f, func(a, b string) { f.Add(a + b) })
	f.Fuzz(func(t *testing.T, s string) {
		for _, d := range decoders {
			out, ok := d.decode(s)
			if !ok && out != s {
				t.Fatalf("%s: reports no change but returns %q for %q", d.name, out, s)
			}
			if shrinking[d.name] && len(out) > len(s) {
				t.Fatalf("%s: output of %d bytes from %d: %q -> %q", d.name, len(out), len(s), s, out)
			}
		}
		for _, d := range transforms {
			out, _ := d.decode(s)
			if d.name != "reverse" && len(out) != len(s) {
				t.Fatalf("%s changed the length: %q -> %q", d.name, s, out)
			}
		}
		if fv := Fold(s); !foldedOnly(fv) {
			t.Fatalf("Fold(%q) = %q", s, fv)
		}
	})
}

// TestShrinkingCoversDecoders keeps the fuzz target's list in step with
// the package's decoders.
func TestShrinkingCoversDecoders(t *testing.T) {
	for _, d := range decoders {
		if !shrinking[d.name] {
			t.Errorf("decoder %s is not in the fuzz target's shrinking list", d.name)
		}
	}
	if len(shrinking) != len(decoders) {
		t.Errorf("shrinking lists %d decoders, the package has %d", len(shrinking), len(decoders))
	}
	if !strings.Contains(strings.Join(Views0("aGVsbG8gd29ybGQ="), "|"), "hello world") {
		t.Errorf("Views does not decode base64")
	}
}

// Views0 is Views of one root, panicking on the error.
func Views0(root string) []string {
	v, err := Views([]string{root})
	if err != nil {
		panic(err)
	}
	return v
}
