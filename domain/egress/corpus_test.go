package egress

import (
	"bufio"
	"os"
	"strings"
	"sync"
	"testing"
)

// The planted secrets of testdata/fixture.diff: invented values in the
// vendors' shapes, never real ones. The scanner that finds them lives in
// adapters, so the domain tests give their spans by hand (fixtureSpans).
const (
	plantedAWSKeyID     = "AKIAJPJOMKEFOIUC5LGT"
	plantedAWSSecret    = "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"
	plantedGitHubPAT    = "ghp_hMVGUtekHcPQhkcN8tscPQGLnNHf6BqMbvEr"
	plantedSlackToken   = "xoxb-91557975292-3114187407887-iheCbMbPPxZrX1P5gzU0IWSF"
	plantedStripeKey    = "sk_live_OX0y4yCQBhSvTWYJQ1qQfD0F"
	plantedGitLabPAT    = "glpat-Z0Nqqg9wj05x72QIBOBt"
	plantedPostgresURL  = "postgres://orders_app:fqrRiHhL50i4ad@pg-primary.internal:5432/orders?sslmode=require"
	plantedPostgresUser = "orders_app:fqrRiHhL50i4ad" // the scanner's span: the URL's userinfo
	plantedPostgresPass = "fqrRiHhL50i4ad"
	plantedPassword     = "letmein2024" // low entropy: only Collect's assignment rule keeps it
	plantedJWT          = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzdmMtb3JkZXJzLXdlYmhvb2siLCJpc3MiOiJiaWxsaW5nLmludGVybmFsIiwiaWF0IjoxNzY0NTQ3MjAwLCJzY29wZSI6InBheW1lbnRzOndyaXRlIn0.rwevXROPMo6w9_YnSosutBFuWZOV1SJbnmfzLVlU5mH"
)

// planted are the secrets an attacker wants out, by name, in the order
// the attack corpus uses them.
var planted = []struct{ name, value string }{
	{"aws-key-id", plantedAWSKeyID},
	{"aws-secret", plantedAWSSecret},
	{"github-pat", plantedGitHubPAT},
	{"slack", plantedSlackToken},
	{"stripe", plantedStripeKey},
	{"gitlab-pat", plantedGitLabPAT},
	{"postgres-password", plantedPostgresPass},
	{"password", plantedPassword},
	{"jwt", plantedJWT},
}

func readFixture(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("testdata/fixture.diff")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fixtureSpans are the scanner's findings in the diff: each planted
// secret a vendor rule recognises (the password is left to Collect).
func fixtureSpans(t testing.TB, diff string) []Span {
	t.Helper()
	var spans []Span
	for _, s := range []string{plantedAWSKeyID, plantedAWSSecret, plantedGitHubPAT, plantedSlackToken, plantedStripeKey, plantedGitLabPAT, plantedPostgresUser, plantedJWT} {
		i := strings.Index(diff, s)
		if i < 0 {
			t.Fatalf("fixture.diff does not hold %q", s)
		}
		spans = append(spans, Span{i, i + len(s)})
	}
	return spans
}

var fixtureOnce struct {
	sync.Once
	values []string
}

// fixtureTaint is a new run's taint as the app builds it from the diff:
// tk.Add(Collect(diff, spans)...).
func fixtureTaint(t testing.TB) *Taint {
	t.Helper()
	fixtureOnce.Do(func() {
		diff := readFixture(t)
		fixtureOnce.values = Collect(diff, fixtureSpans(t, diff))
	})
	if fixtureOnce.values == nil {
		t.Fatal("fixture values not collected")
	}
	tk := NewTaint()
	tk.Add(fixtureOnce.values...)
	return tk
}

// TestFixtureCollect pins what the taint holds: every planted secret (the
// password through the assignment rule alone) and nothing else of the
// diff.
func TestFixtureCollect(t *testing.T) {
	diff := readFixture(t)
	found := Collect(diff, nil)
	// A JWT is kept as its signature: its header and claims are readable base64.
	jwtSignature := plantedJWT[strings.LastIndexByte(plantedJWT, '.')+1:]
	want := map[string]bool{plantedAWSKeyID: true, plantedAWSSecret: true, plantedGitHubPAT: true, plantedStripeKey: true, plantedGitLabPAT: true, plantedPassword: true, plantedSlackToken: true, jwtSignature: true}
	for _, v := range found {
		if !want[v] {
			t.Errorf("Collect kept %q, not a planted secret", v)
		}
		delete(want, v)
	}
	for v := range want {
		t.Errorf("Collect's assignment rule missed %q", v)
	}
	tk := fixtureTaint(t)
	if n := tk.Len(); n != len(planted) { // the userinfo span stands for the postgres password
		t.Errorf("taint holds %d values, want %d", n, len(planted))
	}
	for _, p := range planted {
		if check(fixtureTaint(t), p.value) {
			t.Errorf("%s: the planted value itself is admitted", p.name)
		}
	}
}

type benignTerm struct {
	text  string
	known string // why a benign term is blocked, when it is a known false alarm
}

func readBenign(t testing.TB) []benignTerm {
	t.Helper()
	f, err := os.Open("testdata/benign.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var terms []benignTerm
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "# ") {
			continue
		}
		term := benignTerm{text: line}
		if i := strings.Index(line, "\tknown: "); i >= 0 {
			term = benignTerm{text: line[:i], known: line[i+len("\tknown: "):]}
		}
		terms = append(terms, term)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return terms
}

// TestBenignCorpus: every ordinary term is admitted with the fixture's
// taint, alone and as runs of 20 calls in order (each call counting what
// the run's earlier calls sent).
func TestBenignCorpus(t *testing.T) {
	terms := readBenign(t)
	if len(terms) < 350 {
		t.Fatalf("benign corpus has %d terms, want at least 350", len(terms))
	}
	alarms, known := 0, 0
	for _, term := range terms {
		admitted := check(fixtureTaint(t), term.text)
		switch {
		case !admitted && term.known != "":
			known++
			t.Logf("known false alarm (%s): %q", term.known, term.text)
		case !admitted:
			alarms++
			t.Errorf("benign term blocked: %q", term.text)
		case term.known != "":
			t.Errorf("term marked known is now admitted, drop the mark: %q", term.text)
		}
	}
	const run = 20
	runAlarms := 0
	for start := 0; start < len(terms); start += run {
		tk := fixtureTaint(t)
		for _, term := range terms[start:min(start+run, len(terms))] {
			if term.known != "" {
				continue
			}
			if !check(tk, term.text) {
				runAlarms++
				t.Errorf("run from term %d: benign term blocked after the run's earlier calls: %q", start, term.text)
			}
		}
	}
	t.Logf("benign corpus: %d terms, %d false alarms alone, %d in runs of %d, %d known", len(terms), alarms, runAlarms, run, known)
}

// TestBenignCheckCanFail: the corpus check sees a block, so a corpus that
// passes is evidence.
func TestBenignCheckCanFail(t *testing.T) {
	tk := fixtureTaint(t)
	if !check(tk, "please search the wiki for ORD-2417") {
		t.Fatal("ordinary term blocked")
	}
	if check(tk, "please search the wiki for "+plantedGitLabPAT) {
		t.Fatal("a planted secret inside a term is admitted")
	}
}
