package egress

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unicode/utf16"
)

func zzTaint() *Taint { tk := NewTaint(); tk.Add(plantedGitHubPAT, plantedAWSSecret); return tk }

func TestZZBypass(t *testing.T) {
	v := plantedGitHubPAT
	// 1. in-order 6-char pieces, one filler letter between, one call
	var b strings.Builder
	for i, p := range pieces(v, 6) {
		if i > 0 {
			b.WriteString("q")
		}
		b.WriteString(p)
	}
	t.Logf("filler-1 one call: admitted=%v %q", check(zzTaint(), b.String()), b.String())
	// 2. hex with '.' every 3 digits
	h := hex.EncodeToString([]byte(v))
	t.Logf("hex dot3: admitted=%v", check(zzTaint(), wrap(h, 3, ".")))
	t.Logf("hex |odd: admitted=%v", check(zzTaint(), h[:41]+"|"+h[41:]))
	// 3. base64 misaligned split with '.'
	e := b64s(v)
	t.Logf("b64 split .: admitted=%v", check(zzTaint(), e[:6]+"."+e[6:]))
	t.Logf("b64 dot3: admitted=%v", check(zzTaint(), wrap(e, 3, ".")))
	// 4. base64 of secret+NUL, of é+secret, of UTF-16LE
	t.Logf("b64 +NUL: admitted=%v", check(zzTaint(), b64s(v+"\x00")))
	t.Logf("b64 é+: admitted=%v", check(zzTaint(), b64s("é"+v)))
	u := utf16.Encode([]rune(v))
	bs := make([]byte, 0, 2*len(u))
	for _, x := range u {
		bs = append(bs, byte(x), byte(x>>8))
	}
	t.Logf("b64 utf16le: admitted=%v", check(zzTaint(), base64.StdEncoding.EncodeToString(bs)))
	t.Logf("hex +00: admitted=%v", check(zzTaint(), hex.EncodeToString([]byte(v+"\x00"))))
	// 5. stride 4
	var s4 strings.Builder
	for i := 0; i < len(v); i++ {
		s4.WriteString(v[i:i+1] + "xyz")
	}
	t.Logf("stride4: admitted=%v", check(zzTaint(), s4.String()))
	// 6. concurrent halves of base64 (split misaligned, no separator)
	tk := zzTaint()
	a1, a2 := e[:22], e[22:]
	r1, r2 := tk.Roots([]string{a1}), tk.Roots([]string{a2})
	w1, _ := Views(r1)
	w2, _ := Views(r2)
	t.Logf("concurrent halves: %v %v", tk.Admit([]string{a1}, w1), tk.Admit([]string{a2}, w2))
	tk = zzTaint()
	t.Logf("sequential halves: %v %v", check(tk, a1), check(tk, a2))
	// 7. alnum caesar (digits rotate too)
	const al = "0123456789abcdefghijklmnopqrstuvwxyz"
	var c36 strings.Builder
	for _, c := range strings.ToLower(v) {
		if i := strings.IndexRune(al, c); i >= 0 {
			c36.WriteByte(al[(i+5)%36])
		} else {
			c36.WriteRune(c)
		}
	}
	t.Logf("caesar36: admitted=%v", check(zzTaint(), c36.String()))
}

func TestZZCollect(t *testing.T) {
	pem := "-----BEGIN RSA PRIVATE KEY-----\\nMIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi1fDf7Rk2ZlJb0lA0eY4K8Qv3H\\nxY8kJd9wQ2pLm7Nv5Rt6Uy1Ze3Xc4Vb0Nm8Ka2Sd9Fg7Hj6Lk5Qw3Er2Ty1Ui0Op\\n-----END RSA PRIVATE KEY-----"
	text := `PRIVATE_KEY="` + pem + `"`
	i := strings.Index(text, "-----BEGIN")
	j := strings.LastIndex(text, "-----") + 5
	got := Collect(text, []Span{{i, j}})
	t.Logf("one-line PEM (finding + assignment): %q", got)
	body := "MIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi1fDf7Rk2ZlJb0lA0eY4K8Qv3H"
	tk := NewTaint()
	tk.Add(got...)
	t.Logf("PEM body line admitted=%v", check(tk, body))
	for _, s := range []string{
		`password: "Tr0ub4dor; horse 77 battery"`,
		`password = "p@ss w0rd!2024-xyz"`,
		`{"db_password":"s3cr3t,Pa55phrase!"}`,
		`"key": "PROJ-12345"`,
		`cacheKey: "orders:v2:summary"`,
		`"author": "octocat-2024"`,
		`apiPath: "/v2/charges/refunds"`,
		`primaryKey: user_id_v2`,
		`passthroughMode: strict-v2-mode`,
		`keyId: 550e8400-e29b-41d4-a716-446655440000`,
	} {
		t.Logf("%-45s -> %q", s, Collect(s, nil))
	}
	tk = NewTaint()
	tk.Add(Collect(`{"issues":[{"key": "PROJ-12345", "fields": {}}]}`, nil)...)
	t.Logf("search 'PROJ-12345 regression' admitted=%v", check(tk, "PROJ-12345 regression"))
	tk = NewTaint()
	tk.Add(Collect(`cacheKey: "orders:v2:summary"`, nil)...)
	t.Logf("search 'orders:v2:summary' admitted=%v", check(tk, "orders:v2:summary cache"))
	tk = NewTaint()
	tk.Add(Collect(`keyId: 550e8400-e29b-41d4-a716-446655440000`, nil)...)
	t.Logf("search uuid admitted=%v", check(tk, "550e8400-e29b-41d4-a716-446655440000"))
}

func TestZZMemory(t *testing.T) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	tk := NewTaint()
	for i := 0; i < 512; i++ {
		var b strings.Builder
		for b.Len() < 4096 {
			fmt.Fprintf(&b, "%x", uint64(i)*0x9E3779B97F4A7C15^uint64(b.Len())*0xBF58476D1CE4E5B9)
		}
		tk.Add(b.String())
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	t.Logf("512 values x 4096: heap %d MiB, postings keys %d", (m1.HeapAlloc-m0.HeapAlloc)>>20, len(tk.index))
}
