package id_test

import (
	"testing"

	"github.com/codelotse/codelotse/domain/id"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"0c7dd81c-8256-48c9-9331-20b2815a8dbd", "0c7dd81c-8256-48c9-9331-20b2815a8dbd", true},
		{"0C7DD81C-8256-48C9-9331-20B2815A8DBD", "0c7dd81c-8256-48c9-9331-20b2815a8dbd", true},
		{"", "", false},
		{"0c7dd81c825648c9933120b2815a8dbd", "", false},
		{"0c7dd81c-8256-48c9-9331-20b2815a8db", "", false},
		{"0c7dd81c-8256-48c9-9331-20b2815a8dbdx", "", false},
		{"0c7dd81c_8256-48c9-9331-20b2815a8dbd", "", false},
		{"0c7dd81c-8256-48c9-9331-20b2815a8dbg", "", false},
		{"{0c7dd81c-8256-48c9-9331-20b2815a8db}", "", false},
		{"'; DROP TABLE x; --------------------", "", false},
		{"0c7dd81c-8256-48c9-9331-20b2815a8dbé", "", false},
	}
	for _, tt := range tests {
		got, ok := id.Parse(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Parse(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if id.Valid(tt.in) != (tt.ok && tt.in == tt.want) {
			t.Errorf("Valid(%q) = %v", tt.in, id.Valid(tt.in))
		}
	}
}
