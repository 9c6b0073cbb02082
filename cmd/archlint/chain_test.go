package main

import (
	"strings"
	"testing"
)

// TestChainOrder: the transport's chain in every shape archlint must
// refuse, and the argued order it accepts. Each case is a module of its
// own with adapters/mcpclient/chain.go as given.
func TestChainOrder(t *testing.T) {
	const head = "package mcpclient\n\ntype layer struct {\n\tname string\n\tstep func()\n}\n\nfunc assemble(l []layer) []layer { return l }\n\n"
	layers := func(names ...string) string {
		var b strings.Builder
		b.WriteString("func chain() []layer {\n\ts := func() {}\n\treturn assemble([]layer{\n")
		for _, n := range names {
			b.WriteString("\t\t{\"" + n + "\", s},\n")
		}
		b.WriteString("\t})\n}\n")
		return head + b.String()
	}
	argued := []string{"origin", "handshake", "resumption", "status", "credential", "deadline", "cap"}
	tests := []struct {
		name  string
		files map[string]string
		want  []string // prefixes of the violations, in order; none for the argued order
	}{
		{"the argued order", map[string]string{"chain.go": layers(argued...)}, nil},
		{"status inside the credential", map[string]string{"chain.go": layers("origin", "handshake", "resumption", "credential", "status", "deadline", "cap")},
			[]string{`chain.go:16: layer "credential" stands where "status" belongs`}},
		{"deadline around the credential", map[string]string{"chain.go": layers("origin", "handshake", "resumption", "status", "deadline", "credential", "cap")},
			[]string{`chain.go:17: layer "deadline" stands where "credential" belongs`}},
		{"cap not innermost", map[string]string{"chain.go": layers("origin", "handshake", "resumption", "status", "credential", "cap", "deadline")},
			[]string{`chain.go:18: layer "cap" stands where "deadline" belongs`}},
		{"a layer missing", map[string]string{"chain.go": layers("origin", "handshake", "resumption", "status", "credential", "deadline")},
			[]string{`chain.go:12: the guarded transport lacks its layer "cap"`}},
		{"an unargued layer", map[string]string{"chain.go": layers(append(argued[:7:7], "retry")...)},
			[]string{`chain.go:20: layer "retry" is not in the argued order`}},
		{"a layer without its name", map[string]string{"chain.go": head + "func chain() []layer {\n\tn := \"origin\"\n\treturn assemble([]layer{{n, nil}})\n}\n"},
			[]string{`chain.go:12: a layer of the guarded transport without its name`}},
		{"the chain under another name", map[string]string{"chain.go": strings.Replace(layers(argued...), "func chain()", "func transport()", 1)},
			[]string{`chain.go:1: no function chain assembles the guarded transport`, `chain.go:12: calls assemble outside`, `chain.go:12: assembles layers of the guarded transport outside adapters/mcpclient/chain.go's chain`}},
		{"no chain at all", map[string]string{"guard.go": "package mcpclient\n"},
			[]string{`chain.go:1: no function chain assembles the guarded transport`}},
		{"a method named chain", map[string]string{"chain.go": strings.Replace(layers(argued...), "func chain()", "func (g *guard) chain()", 1) + "\ntype guard struct{}\n"},
			[]string{`chain.go:1: no function chain assembles the guarded transport`, `chain.go:12: calls assemble outside`, `chain.go:12: assembles layers of the guarded transport outside`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"go.mod": "module example.com/chain\n\ngo 1.26\n"}
			for name, body := range tt.files {
				files["adapters/mcpclient/"+name] = body
			}
			root := writeTree(t, files)
			got, err := Check(root)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Check = %v, want %d violation(s): %q", got, len(tt.want), tt.want)
			}
			for i, want := range tt.want {
				if !strings.HasPrefix(got[i].String(), "adapters/mcpclient/"+want) {
					t.Errorf("violation %d = %q, want prefix %q", i, got[i], "adapters/mcpclient/"+want)
				}
			}
		})
	}
}
