package crypto

import (
	gocrypto "crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"time"

	"github.com/codelotse/codelotse/ports"
)

// AssertionLifetime is how long a client assertion is valid: exp is iat
// plus this.
const AssertionLifetime = time.Minute

// ErrNoSigningKeys: the signing ring is empty (QUAVON_OAUTH_SIGNING_KEYS
// is not set), so no client assertion can be signed.
var ErrNoSigningKeys = errors.New("no OAuth signing keys are configured (QUAVON_OAUTH_SIGNING_KEYS)")

// SigningKey is one entry of the signing ring: its id, published as the
// JWK's kid and named by every assertion it signs, and its private key:
// ECDSA on P-256 (ES256) or Ed25519 (EdDSA).
type SigningKey struct {
	ID  string
	Key gocrypto.Signer
}

// SigningRing signs the client assertions of private_key_jwt (RFC 7523
// §2.2) with its first key and publishes the public part of every key
// as a JWK set. It implements [ports.ClientAssertions], is immutable
// after [NewSigningRing] and safe for concurrent use.
//
// The signing is the standard library's (crypto/ecdsa, crypto/ed25519),
// in the JWS compact serialization of RFC 7515 with RFC 7518's ES256 and
// RFC 8037's EdDSA; a library would add a dependency for a few lines.
type SigningRing struct {
	keys []signingKey
	jwks []byte
	now  func() time.Time
}

var _ ports.ClientAssertions = (*SigningRing)(nil)

type signingKey struct {
	id     string
	alg    string // "ES256" or "EdDSA"
	signer gocrypto.Signer
}

// jwk is one published key: its public part only, never a private
// component ("d").
type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y,omitempty"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
}

// NewSigningRing builds a ring from keys; keys[0] signs. Each id must be
// 1 to 255 bytes and unique, each key ECDSA on P-256 or Ed25519 (any
// [crypto.Signer] whose public key is one of them); the error names the
// key's position or id, never key material. now is the clock of iat and
// exp; nil is time.Now. An empty keys gives an empty ring: its
// ClientAssertion returns [ErrNoSigningKeys] and its JWKS is nil.
func NewSigningRing(keys []SigningKey, now func() time.Time) (*SigningRing, error) {
	if now == nil {
		now = time.Now
	}
	r := &SigningRing{now: now}
	seen := make(map[string]bool, len(keys))
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: []jwk{}}
	for i, k := range keys {
		if k.ID == "" || len(k.ID) > maxIDLen {
			return nil, fmt.Errorf("signing key %d: id must be 1 to %d bytes", i+1, maxIDLen)
		}
		if seen[k.ID] {
			return nil, fmt.Errorf("signing key %s: duplicate id", strconv.Quote(k.ID))
		}
		seen[k.ID] = true
		if k.Key == nil {
			return nil, fmt.Errorf("signing key %s: no key", strconv.Quote(k.ID))
		}
		pub, err := publicJWK(k.Key.Public())
		if err != nil {
			return nil, fmt.Errorf("signing key %s: %w", strconv.Quote(k.ID), err)
		}
		pub.Kid = k.ID
		pub.Use = "sig"
		set.Keys = append(set.Keys, pub)
		r.keys = append(r.keys, signingKey{id: k.ID, alg: pub.Alg, signer: k.Key})
	}
	if len(r.keys) > 0 {
		b, err := json.Marshal(set)
		if err != nil {
			return nil, err
		}
		r.jwks = b
	}
	return r, nil
}

// publicJWK is the JWK of a public key (RFC 7518 §6.2, RFC 8037 §2),
// without kid and use.
func publicJWK(pub gocrypto.PublicKey) (jwk, error) {
	b64 := base64.RawURLEncoding.EncodeToString
	switch p := pub.(type) {
	case *ecdsa.PublicKey:
		if p.Curve != elliptic.P256() {
			return jwk{}, errors.New("must be an ECDSA P-256 (ES256) or Ed25519 key")
		}
		point, err := p.Bytes() // 0x04 | x (32 bytes) | y (32 bytes)
		if err != nil {
			return jwk{}, errors.New("invalid ECDSA public key")
		}
		return jwk{Kty: "EC", Crv: "P-256", X: b64(point[1:33]), Y: b64(point[33:]), Alg: "ES256"}, nil
	case ed25519.PublicKey:
		if len(p) != ed25519.PublicKeySize {
			return jwk{}, errors.New("invalid Ed25519 public key")
		}
		return jwk{Kty: "OKP", Crv: "Ed25519", X: b64(p), Alg: "EdDSA"}, nil
	}
	return jwk{}, errors.New("must be an ECDSA P-256 (ES256) or Ed25519 key")
}

// JWKS is the ring's JWK set, {"keys":[…]}: the public part of every key
// in ring order, with its kid, alg and use "sig"; nil for an empty ring.
// The same bytes on every call.
func (r *SigningRing) JWKS() []byte {
	if r == nil || r.jwks == nil {
		return nil
	}
	return append([]byte(nil), r.jwks...)
}

// Len is the number of keys in the ring.
func (r *SigningRing) Len() int {
	if r == nil {
		return 0
	}
	return len(r.keys)
}

// ClientAssertion signs, with the ring's first key, the JWT
//
//	header {"alg":"ES256"|"EdDSA","kid":<key id>,"typ":"JWT"}
//	claims {"iss":clientID,"sub":clientID,"aud":audience,"jti":<128 random bits, base64url>,"iat":now,"exp":now+60}
//
// in the compact serialization. An ES256 signature is r||s, 32 bytes
// each (RFC 7518 §3.4), not the ASN.1 the signer returns.
func (r *SigningRing) ClientAssertion(clientID, audience string) (string, error) {
	if r == nil || len(r.keys) == 0 {
		return "", ErrNoSigningKeys
	}
	k := r.keys[0]
	header, err := json.Marshal(struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
		Typ string `json:"typ"`
	}{k.alg, k.id, "JWT"})
	if err != nil {
		return "", err
	}
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	iat := r.now().Unix()
	claims, err := json.Marshal(struct {
		Iss string `json:"iss"`
		Sub string `json:"sub"`
		Aud string `json:"aud"`
		Jti string `json:"jti"`
		Iat int64  `json:"iat"`
		Exp int64  `json:"exp"`
	}{clientID, clientID, audience, base64.RawURLEncoding.EncodeToString(jti), iat, iat + int64(AssertionLifetime/time.Second)})
	if err != nil {
		return "", err
	}
	b64 := base64.RawURLEncoding.EncodeToString
	input := b64(header) + "." + b64(claims)
	sig, err := k.sign([]byte(input))
	if err != nil {
		return "", err
	}
	return input + "." + b64(sig), nil
}

// sign is the JWS signature of input under k's algorithm.
func (k signingKey) sign(input []byte) ([]byte, error) {
	if k.alg == "EdDSA" {
		// Ed25519 signs the message itself (crypto.Hash(0)).
		return k.signer.Sign(rand.Reader, input, gocrypto.Hash(0))
	}
	digest := sha256.Sum256(input)
	der, err := k.signer.Sign(rand.Reader, digest[:], gocrypto.SHA256)
	if err != nil {
		return nil, err
	}
	return rawECDSA(der)
}

// rawECDSA turns an ASN.1 ECDSA signature (SEQUENCE of r and s) into the
// JWS form: r and s as 32-byte big-endian integers, concatenated.
func rawECDSA(der []byte) ([]byte, error) {
	var sig struct{ R, S *big.Int }
	rest, err := asn1.Unmarshal(der, &sig)
	if err != nil || len(rest) != 0 || sig.R.Sign() <= 0 || sig.S.Sign() <= 0 || sig.R.BitLen() > 256 || sig.S.BitLen() > 256 {
		return nil, errors.New("malformed ECDSA signature")
	}
	out := make([]byte, 64)
	sig.R.FillBytes(out[:32])
	sig.S.FillBytes(out[32:])
	return out, nil
}
