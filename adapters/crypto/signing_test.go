package crypto_test

import (
	"bytes"
	gocrypto "crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/crypto"
	"github.com/codelotse/codelotse/ports"
	jose "github.com/go-jose/go-jose/v4"
)

// signingNow is the fixed clock of the signing tests.
var signingNow = time.Date(2026, 7, 28, 10, 0, 0, 0, time.UTC)

func edSigner(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func ecSigner(t *testing.T, c elliptic.Curve) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func signingRing(t *testing.T, keys ...crypto.SigningKey) *crypto.SigningRing {
	t.Helper()
	r, err := crypto.NewSigningRing(keys, func() time.Time { return signingNow })
	if err != nil {
		t.Fatalf("NewSigningRing() = %v", err)
	}
	return r
}

// jwks parses the ring's published set with go-jose.
func jwks(t *testing.T, r *crypto.SigningRing) jose.JSONWebKeySet {
	t.Helper()
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(r.JWKS(), &set); err != nil {
		t.Fatalf("JWKS() = %s: %v", r.JWKS(), err)
	}
	return set
}

// assertion is a verified client assertion: its header and claims as
// they were sent, and the length of its signature.
type assertion struct {
	header, claims map[string]any
	sigLen         int
}

// verify checks token with go-jose against the published key its kid
// names, and returns what it carries.
func verify(t *testing.T, set jose.JSONWebKeySet, token string) assertion {
	t.Helper()
	jws, err := jose.ParseSigned(token, []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA})
	if err != nil {
		t.Fatalf("ParseSigned(%s) = %v", token, err)
	}
	kid := jws.Signatures[0].Header.KeyID
	keys := set.Key(kid)
	if len(keys) != 1 {
		t.Fatalf("the JWKS has %d keys with kid %q, want 1", len(keys), kid)
	}
	if jws.Signatures[0].Header.Algorithm != keys[0].Algorithm {
		t.Errorf("alg %q, but the published key %q is %q", jws.Signatures[0].Header.Algorithm, kid, keys[0].Algorithm)
	}
	payload, err := jws.Verify(keys[0])
	if err != nil {
		t.Fatalf("the assertion does not verify with the published key %q: %v", kid, err)
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("assertion %q is not a compact JWS", token)
	}
	var a assertion
	for i, v := range []*map[string]any{&a.header, &a.claims} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatalf("part %d of %q is not base64url: %v", i+1, token, err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatalf("part %d of %q is not JSON: %v", i+1, token, err)
		}
	}
	if !bytes.Equal(payload, mustDecode(t, parts[1])) {
		t.Errorf("verified payload %s differs from the claims", payload)
	}
	a.sigLen = len(mustDecode(t, parts[2]))
	return a
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("%q is not base64url: %v", s, err)
	}
	return b
}

func keysOf(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// TestClientAssertionsVerifyAgainstTheJWKS: every assertion of an ES256
// and of an EdDSA ring verifies with the published key of its kid and
// carries exactly the claims of RFC 7523 §3; jti differs in each of 1000
// assertions; exp is iat plus a minute.
func TestClientAssertionsVerifyAgainstTheJWKS(t *testing.T) {
	tests := []struct {
		name, alg string
		key       gocrypto.Signer
		sigLen    int
	}{
		{"ES256", "ES256", ecSigner(t, elliptic.P256()), 64},
		{"EdDSA", "EdDSA", edSigner(t), ed25519.SignatureSize},
	}
	const (
		clientID = "https://review.example.com/oauth/client-metadata.json"
		audience = "https://as.example.com/token"
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := signingRing(t, crypto.SigningKey{ID: "k1", Key: tt.key})
			var ca ports.ClientAssertions = r
			set := jwks(t, r)
			jtis := map[string]bool{}
			for i := range 1000 {
				token, err := ca.ClientAssertion(clientID, audience)
				if err != nil {
					t.Fatalf("ClientAssertion() = %v", err)
				}
				a := verify(t, set, token)
				if i == 0 {
					if got := keysOf(a.header); !slices.Equal(got, []string{"alg", "kid", "typ"}) {
						t.Errorf("header members %v, want alg, kid, typ", got)
					}
					if a.header["alg"] != tt.alg || a.header["kid"] != "k1" || a.header["typ"] != "JWT" {
						t.Errorf("header %v, want alg %s, kid k1, typ JWT", a.header, tt.alg)
					}
					if got := keysOf(a.claims); !slices.Equal(got, []string{"aud", "exp", "iat", "iss", "jti", "sub"}) {
						t.Errorf("claims %v, want exactly aud, exp, iat, iss, jti, sub", got)
					}
					if a.claims["iss"] != clientID || a.claims["sub"] != clientID || a.claims["aud"] != audience {
						t.Errorf("iss %v, sub %v, aud %v; want the client id twice and the audience", a.claims["iss"], a.claims["sub"], a.claims["aud"])
					}
					if a.sigLen != tt.sigLen {
						t.Errorf("signature of %d bytes, want %d (an ES256 signature is r||s, RFC 7518 §3.4)", a.sigLen, tt.sigLen)
					}
				}
				iat, _ := a.claims["iat"].(float64)
				exp, _ := a.claims["exp"].(float64)
				if int64(iat) != signingNow.Unix() || exp-iat != 60 {
					t.Fatalf("iat %v, exp %v; want iat the clock's %d and exp a minute later", a.claims["iat"], a.claims["exp"], signingNow.Unix())
				}
				jti, _ := a.claims["jti"].(string)
				if raw, err := base64.RawURLEncoding.DecodeString(jti); err != nil || len(raw) != 16 {
					t.Fatalf("jti %q, want 128 bits in base64url", jti)
				}
				if jtis[jti] {
					t.Fatalf("assertion %d repeats the jti %q", i+1, jti)
				}
				jtis[jti] = true
			}
		})
	}
}

// TestClientAssertionAudienceIsTheOneGiven: aud is the audience of the
// request, whatever the client id.
func TestClientAssertionAudienceIsTheOneGiven(t *testing.T) {
	r := signingRing(t, crypto.SigningKey{ID: "k1", Key: edSigner(t)})
	set := jwks(t, r)
	for _, aud := range []string{"https://as.example.com/token", "https://other.example.com/oauth2/token"} {
		token, err := r.ClientAssertion("client-a", aud)
		if err != nil {
			t.Fatal(err)
		}
		if a := verify(t, set, token); a.claims["aud"] != aud || a.claims["iss"] != "client-a" {
			t.Errorf("aud %v, iss %v; want %q, client-a", a.claims["aud"], a.claims["iss"], aud)
		}
	}
}

// TestClientAssertionExpiresWithinAMinute: with the real clock, exp is at
// most a minute from now.
func TestClientAssertionExpiresWithinAMinute(t *testing.T) {
	r, err := crypto.NewSigningRing([]crypto.SigningKey{{ID: "k1", Key: ecSigner(t, elliptic.P256())}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().Unix()
	token, err := r.ClientAssertion("c", "https://as.example.com/token")
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().Unix()
	a := verify(t, jwks(t, r), token)
	iat, _ := a.claims["iat"].(float64)
	exp, _ := a.claims["exp"].(float64)
	if int64(iat) < before || int64(iat) > after || int64(exp) > after+60 || exp-iat != 60 {
		t.Errorf("iat %v, exp %v; want iat now (%d to %d) and exp a minute later", iat, exp, before, after)
	}
}

// TestFirstSigningKeySigns: a ring of an Ed25519 and an ECDSA key signs
// with the first (EdDSA, its kid) and publishes both, in ring order.
func TestFirstSigningKeySigns(t *testing.T) {
	ed, ec := edSigner(t), ecSigner(t, elliptic.P256())
	r := signingRing(t, crypto.SigningKey{ID: "new", Key: ed}, crypto.SigningKey{ID: "old", Key: ec})
	set := jwks(t, r)
	if len(set.Keys) != 2 || set.Keys[0].KeyID != "new" || set.Keys[1].KeyID != "old" {
		t.Fatalf("JWKS %s, want the keys new and old in that order", r.JWKS())
	}
	if !ed.Public().(ed25519.PublicKey).Equal(set.Keys[0].Key) || !ec.PublicKey.Equal(set.Keys[1].Key) {
		t.Errorf("the published keys are not the ring's public keys: %s", r.JWKS())
	}
	if set.Keys[0].Algorithm != "EdDSA" || set.Keys[1].Algorithm != "ES256" || set.Keys[0].Use != "sig" || set.Keys[1].Use != "sig" {
		t.Errorf("JWKS %s, want alg EdDSA then ES256, use sig", r.JWKS())
	}
	token, err := r.ClientAssertion("c", "https://as.example.com/token")
	if err != nil {
		t.Fatal(err)
	}
	if a := verify(t, set, token); a.header["kid"] != "new" || a.header["alg"] != "EdDSA" {
		t.Errorf("header %v, want the first key: kid new, alg EdDSA", a.header)
	}
	jws, err := jose.ParseSigned(token, []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jws.Verify(set.Keys[1]); err == nil {
		t.Errorf("the assertion verifies with the second key too")
	}
	if r.Len() != 2 {
		t.Errorf("Len() = %d, want 2", r.Len())
	}
}

// TestJWKSHasNoPrivatePart: the published set holds the public members
// only (no "d", nothing else), never a byte of a private key, and is the
// same on every call.
func TestJWKSHasNoPrivatePart(t *testing.T) {
	ed, ec := edSigner(t), ecSigner(t, elliptic.P256())
	r := signingRing(t, crypto.SigningKey{ID: "ec", Key: ec}, crypto.SigningKey{ID: "ed", Key: ed})
	raw := r.JWKS()
	var doc struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Keys) != 2 {
		t.Fatalf("JWKS() = %s, %v", raw, err)
	}
	want := [][]string{
		{"alg", "crv", "kid", "kty", "use", "x", "y"},
		{"alg", "crv", "kid", "kty", "use", "x"},
	}
	for i, k := range doc.Keys {
		if _, ok := k["d"]; ok {
			t.Errorf("key %d publishes its private part d: %s", i+1, raw)
		}
		if got := keysOf(k); !slices.Equal(got, want[i]) {
			t.Errorf("key %d has members %v, want %v", i+1, got, want[i])
		}
	}
	if doc.Keys[0]["kty"] != "EC" || doc.Keys[0]["crv"] != "P-256" || doc.Keys[1]["kty"] != "OKP" || doc.Keys[1]["crv"] != "Ed25519" {
		t.Errorf("JWKS %s, want an EC P-256 key then an OKP Ed25519 key", raw)
	}
	for _, k := range jwks(t, r).Keys {
		if !k.IsPublic() {
			t.Errorf("go-jose reads key %q as a private key", k.KeyID)
		}
	}
	scalar, err := ec.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range [][]byte{scalar, ed.Seed()} {
		for _, enc := range []string{base64.RawURLEncoding.EncodeToString(secret), base64.StdEncoding.EncodeToString(secret), hex.EncodeToString(secret)} {
			if strings.Contains(string(raw), enc[:16]) {
				t.Errorf("JWKS %s contains private key material", raw)
			}
		}
	}
	if again := r.JWKS(); !bytes.Equal(raw, again) {
		t.Errorf("JWKS() changed between calls: %s, then %s", raw, again)
	}
	raw[0] = 'x'
	if bytes.Equal(raw, r.JWKS()) {
		t.Errorf("JWKS() returns the ring's own bytes: a caller can change what is published")
	}
}

// otherSigner is a crypto.Signer whose key the ring does not accept.
type otherSigner struct{ pub gocrypto.PublicKey }

func (s otherSigner) Public() gocrypto.PublicKey { return s.pub }
func (s otherSigner) Sign(_ io.Reader, _ []byte, _ gocrypto.SignerOpts) ([]byte, error) {
	return nil, errors.New("not used")
}

func TestNewSigningRingRefuses(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p384 := ecSigner(t, elliptic.P384())
	ed := edSigner(t)
	tests := []struct {
		name string
		keys []crypto.SigningKey
		want string
	}{
		{"RSA key", []crypto.SigningKey{{ID: "k1", Key: rsaKey}}, `signing key "k1": must be an ECDSA P-256 (ES256) or Ed25519 key`},
		{"P-384 key", []crypto.SigningKey{{ID: "k1", Key: p384}}, `signing key "k1": must be an ECDSA P-256 (ES256) or Ed25519 key`},
		{"short Ed25519 public key", []crypto.SigningKey{{ID: "k1", Key: otherSigner{ed25519.PublicKey(make([]byte, 31))}}}, `signing key "k1": invalid Ed25519 public key`},
		{"no key", []crypto.SigningKey{{ID: "k1"}}, `signing key "k1": no key`},
		{"empty id", []crypto.SigningKey{{ID: "", Key: ed}}, "signing key 1: id must be 1 to 255 bytes"},
		{"long id", []crypto.SigningKey{{ID: strings.Repeat("k", 256), Key: ed}}, "signing key 1: id must be 1 to 255 bytes"},
		{"duplicate id", []crypto.SigningKey{{ID: "k1", Key: ed}, {ID: "k1", Key: ecSigner(t, elliptic.P256())}}, `signing key "k1": duplicate id`},
		{"second key bad", []crypto.SigningKey{{ID: "k1", Key: ed}, {ID: "k2", Key: rsaKey}}, `signing key "k2": must be`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := crypto.NewSigningRing(tt.keys, nil)
			if err == nil || r != nil {
				t.Fatalf("NewSigningRing() = %v, %v; want an error", r, err)
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %q, want it to start %q", err, tt.want)
			}
			seed := hex.EncodeToString(ed.Seed())
			if strings.Contains(err.Error(), seed[:16]) || strings.Contains(err.Error(), rsaKey.D.String()[:16]) {
				t.Errorf("error %q shows key material", err)
			}
		})
	}
}

func TestEmptySigningRing(t *testing.T) {
	for _, r := range []*crypto.SigningRing{signingRing(t), nil} {
		if _, err := r.ClientAssertion("c", "https://as.example.com/token"); !errors.Is(err, crypto.ErrNoSigningKeys) {
			t.Errorf("ClientAssertion() on an empty ring = %v, want ErrNoSigningKeys", err)
		}
		if b := r.JWKS(); b != nil {
			t.Errorf("JWKS() of an empty ring = %s, want nil", b)
		}
		if r.Len() != 0 {
			t.Errorf("Len() = %d, want 0", r.Len())
		}
	}
}
