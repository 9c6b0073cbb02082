package egress

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// runTaint is a run's worth of collected values: 200 secret-like values
// of 20 to 60 characters, and a history of ordinary calls.
func runTaint(b *testing.B) *Taint {
	tk := NewTaint()
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
	for tk.Len() < 200 {
		v := make([]byte, 20+r.IntN(41))
		for i := range v {
			v[i] = alphabet[r.IntN(len(alphabet))]
		}
		tk.Add(string(v))
	}
	for i := 0; i < 30; i++ {
		if !check(tk, fmt.Sprintf("ORD-%d webhook retry policy design doc %d", 2400+i, i)) {
			b.Fatal("history call blocked")
		}
	}
	return tk
}

func ordinaryArg() string {
	arg := ""
	for len(arg) < 500 {
		arg += "how does the session cache handle expired tokens in the login flow (ORD-2417, RetryPolicy.nextBackoff) "
	}
	return arg[:500]
}

// BenchmarkAdmit: one ordinary 500-character argument, Views and Admit,
// against 200 collected values and a history.
func BenchmarkAdmit(b *testing.B) {
	tk := runTaint(b)
	args := []string{ordinaryArg()}
	b.ResetTimer()
	for b.Loop() {
		views, err := Views(tk.roots(args))
		if err != nil || !tk.admit(args, views) {
			b.Fatal("ordinary argument blocked")
		}
	}
}

// BenchmarkAdmitWorst: 20 properties of 500 bytes of nested encodings
// against a taint of MaxValues values: Views until it gives up
// (ErrTooManyViews, the call blocked) or Views and Admit.
func BenchmarkAdmitWorst(b *testing.B) {
	for _, c := range []struct {
		name string
		args []string
	}{{"20x500", worstArgs()}, {"at-caps", worstSmallArgs()}} {
		b.Run(c.name, func(b *testing.B) {
			tk := fullTaint()
			for b.Loop() {
				views, err := Views(tk.roots(c.args))
				if err == nil && tk.admit(c.args, views) {
					b.Fatal("worst case admitted")
				}
			}
		})
	}
}

// BenchmarkAdmitWorstAdmitOnly: Admit alone over the largest views
// Views returns within the caps, folded and scanned against MaxValues
// values.
func BenchmarkAdmitWorstAdmitOnly(b *testing.B) {
	tk := fullTaint()
	views := []string{}
	size := 0
	for i := 0; len(views) < MaxViews-1 && size+2000 < MaxViewBytes; i++ {
		v := strings.Repeat(worstArg(i, 2000), 1)
		views = append(views, v)
		size += len(v)
	}
	args := []string{"x"}
	b.ResetTimer()
	for b.Loop() {
		tk.admit(args, views)
	}
}
