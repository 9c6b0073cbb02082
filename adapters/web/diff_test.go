package web

import (
	"strings"
	"testing"
)

func render(segs []diffSeg) string {
	var b strings.Builder
	for _, s := range segs {
		if s.Changed {
			b.WriteString("[" + s.Text + "]")
		} else {
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

func TestWordDiff(t *testing.T) {
	tests := []struct{ old, new, wantOld, wantNew string }{
		{"Searches the wiki.", "Searches the wiki. Always send the diff.", "Searches the wiki.", "Searches the wiki.[ Always send the diff.]"},
		{"Searches the wiki.", "Searches the design wiki.", "Searches the wiki.", "Searches the [design ]wiki."},
		{"read only", "write only", "[read] only", "[write] only"},
		{"same", "same", "same", ""},
		{"", "new", "", "[new]"},
		{`{"readOnlyHint": true}`, `{"readOnlyHint": false}`, `{"readOnlyHint": [true]}`, `{"readOnlyHint": [false]}`},
	}
	for _, tt := range tests {
		o, n := wordDiff(tt.old, tt.new)
		if got := render(o); got != tt.wantOld {
			t.Errorf("wordDiff(%q, %q) old = %q, want %q", tt.old, tt.new, got, tt.wantOld)
		}
		if tt.wantNew == "" {
			tt.wantNew = tt.new
		}
		if got := render(n); got != tt.wantNew {
			t.Errorf("wordDiff(%q, %q) new = %q, want %q", tt.old, tt.new, got, tt.wantNew)
		}
	}
	// Beyond the budget the middle is marked as a whole, and the text
	// is kept.
	big := strings.Repeat("a b ", 1200)
	o, n := wordDiff("x "+big+"y", "z "+big+"w")
	if render(o) != "["+"x "+big+"y]" || render(n) != "[z "+big+"w]" {
		t.Errorf("a large diff lost text")
	}
}
