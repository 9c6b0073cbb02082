package egress

import (
	"encoding/base64"
	"encoding/hex"
	"testing"
)

// check is Check with a scanner that finds nothing: the taint alone.
func check(tk *Taint, args ...string) bool {
	return tk.Check(args, func(string) bool { return true })
}

func TestAdmitSmoke(t *testing.T) {
	key := "AKIAZ7Q4KXG2M3NB5WJ6"
	gh := "ghp_4Rk9mXq2Lw8Zt5Yp1Vn7Bc3Hd6Jf0Ga2Se9U"
	cases := map[string][]string{
		"plain":    {key},
		"b64":      {base64.StdEncoding.EncodeToString([]byte(key))},
		"b64x2":    {base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte(gh))))},
		"hex":      {hex.EncodeToString([]byte(key))},
		"rev":      {reverse(key)},
		"rot13":    {rotate(gh, 13, 'a', 26)},
		"spaced":   {"A K I A Z 7 Q 4 K X G 2 M 3 N B 5 W J 6"},
		"cyr":      {"АKIAZ7Q4KXG2M3NB5WJ6"},
		"noprefix": {gh[4:]},
		"interl":   {"AxKxIxAxZx7xQx4xKxXxGx2xMx3xNxBx"},
		"entities": {"&#65;&#75;&#73;&#65;&#90;&#55;&#81;&#52;&#75;&#88;&#71;&#50;"},
		"b64rev":   {reverse(base64.StdEncoding.EncodeToString([]byte(key)))},
	}
	for name, args := range cases {
		tk := NewTaint()
		tk.Add(key, gh)
		if check(tk, args...) {
			t.Errorf("%s: admitted", name)
		}
	}
	tk := NewTaint()
	tk.Add(key, gh)
	if !check(tk, gh[:9]) {
		t.Fatalf("first piece refused")
	}
	if check(tk, gh[20:29]) {
		t.Errorf("halves admitted")
	}
	for _, ok := range []string{"cache invalidation", "ERR_CONNECTION_RESET", "550e8400-e29b-41d4-a716-446655440000", "3f2a9c1d0b7e4f6a8c5d2e1f0a9b8c7d6e5f4a3b", "JIRA-1234 login timeout", "aGVsbG8gd29ybGQ=", "v1.2.3", "https://wiki.example.com/page"} {
		tk := NewTaint()
		tk.Add(key, gh)
		if !check(tk, ok) {
			t.Errorf("%q blocked", ok)
		}
	}
}
