// Package benchcompare measures the CodeLotse secret scanner side by side
// with gitleaks' own detector (v8.30.1, as a library) and checks that ours
// finds what gitleaks finds. It is a separate module so that gitleaks'
// ~200 dependencies stay out of the main module.
package benchcompare

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/secrets"
	"github.com/codelotse/codelotse/ports"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/report"
)

var corpus = []string{"wiki", "dense", "planted"}

func read(tb testing.TB, name string) string {
	tb.Helper()
	b, err := os.ReadFile("../testdata/" + name + ".txt")
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func scanners(tb testing.TB) (*secrets.Scanner, *detect.Detector) {
	tb.Helper()
	ours, err := secrets.New()
	if err != nil {
		tb.Fatal(err)
	}
	gl, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		tb.Fatal(err)
	}
	return ours, gl
}

// BenchmarkCompare runs both scanners on the three 64 KiB texts in one
// run: BenchmarkCompare/<text>/{codelotse,gitleaks}.
func BenchmarkCompare(b *testing.B) {
	ours, gl := scanners(b)
	for _, name := range corpus {
		text := read(b, name)
		b.Run(name+"/codelotse", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				ours.Scan(text)
			}
		})
		b.Run(name+"/gitleaks", func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				gl.DetectString(text)
			}
		})
	}
}

// BenchmarkRatio runs both scanners on the same text in every iteration,
// one right after the other, so that both see the same load on a shared
// machine; it reports each one's time per scan and the ratio
// gitleaks ÷ codelotse ("x-faster"). BenchmarkRatio/<text>.
func BenchmarkRatio(b *testing.B) {
	ours, gl := scanners(b)
	for _, name := range corpus {
		text := read(b, name)
		b.Run(name, func(b *testing.B) {
			var tOurs, tGL time.Duration
			for i := 0; b.Loop(); i++ {
				// Alternate which runs first, so neither always warms the
				// caches for the other.
				for j := range 2 {
					start := time.Now()
					if (i+j)%2 == 0 {
						ours.Scan(text)
						tOurs += time.Since(start)
					} else {
						gl.DetectString(text)
						tGL += time.Since(start)
					}
				}
			}
			b.ReportMetric(float64(tOurs.Nanoseconds())/float64(b.N), "codelotse-ns/op")
			b.ReportMetric(float64(tGL.Nanoseconds())/float64(b.N), "gitleaks-ns/op")
			b.ReportMetric(float64(tGL)/float64(tOurs), "x-faster")
		})
	}
}

// covered reports whether one of ours covers gitleaks' finding's secret:
// ours reports the secret's byte range, gitleaks the secret's text.
func covered(text string, ours []ports.SecretFinding, f report.Finding) bool {
	for _, o := range ours {
		if strings.Contains(text[o.Start:o.End], f.Secret) || strings.Contains(f.Secret, text[o.Start:o.End]) {
			return true
		}
	}
	return false
}

// TestPlanted compares both scanners on planted.txt: ours finds every
// gitleaks finding, and the two kinds gitleaks has no rule for.
func TestPlanted(t *testing.T) {
	ours, gl := scanners(t)
	text := read(t, "planted")
	fs := ours.Scan(text)
	glf := gl.DetectString(text)
	rules := map[string]int{}
	for _, f := range fs {
		rules[f.Rule]++
	}
	glRules := map[string]int{}
	for _, f := range glf {
		glRules[f.RuleID]++
		if !covered(text, fs, f) {
			t.Errorf("gitleaks finds %s %q, we do not", f.RuleID, f.Secret)
		}
	}
	t.Logf("codelotse: %d findings %v", len(fs), rules)
	t.Logf("gitleaks:  %d findings %v", len(glf), glRules)
	for _, want := range []string{"aws-access-token", "github-pat", "slack-bot-token", "stripe-access-token",
		"private-key", secrets.RuleURLCredentials, secrets.RuleEmail} {
		if rules[want] == 0 {
			t.Errorf("codelotse: no %s finding on planted.txt", want)
		}
	}
}

// TestSamplesAgainstGitleaks runs both on every true-positive sample:
// ours must cover every secret gitleaks' full detector finds.
func TestSamplesAgainstGitleaks(t *testing.T) {
	ours, gl := scanners(t)
	b, err := os.ReadFile("../testdata/gitleaks-samples.json")
	if err != nil {
		t.Fatal(err)
	}
	var samples []struct {
		Rule string   `json:"rule"`
		TPs  []string `json:"tps"`
	}
	if err := json.Unmarshal(b, &samples); err != nil {
		t.Fatal(err)
	}
	var n, glFound, oursFound, missed int
	for _, s := range samples {
		for _, tp := range s.TPs {
			n++
			fs := ours.Scan(tp)
			glf := gl.DetectString(tp)
			if len(glf) > 0 {
				glFound++
			}
			if len(fs) > 0 {
				oursFound++
			}
			for _, f := range glf {
				if !covered(tp, fs, f) {
					missed++
					t.Errorf("gitleaks finds %s %q in %.100q, we do not", f.RuleID, f.Secret, tp)
				}
			}
		}
	}
	t.Logf("tps samples: %d; with a finding: gitleaks %d, codelotse %d; gitleaks findings we miss: %d", n, glFound, oursFound, missed)
}

// TestSameRules checks that we load gitleaks' rules, less the five that
// need a file path, plus our two.
func TestSameRules(t *testing.T) {
	ours, gl := scanners(t)
	var want []string
	for id, r := range gl.Config.Rules {
		if r.Path == nil {
			want = append(want, id)
		}
	}
	want = append(want, secrets.RuleEmail, secrets.RuleURLCredentials)
	got := ours.Rules()
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("Rules() = %d ids, gitleaks' pathless rules + ours = %d", len(got), len(want))
	}
}
