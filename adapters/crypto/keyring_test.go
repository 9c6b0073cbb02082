package crypto_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/adapters/crypto"
)

func key(id string, fill byte) crypto.Key {
	return crypto.Key{ID: id, Secret: bytes.Repeat([]byte{fill}, crypto.KeySize)}
}

func ring(t *testing.T, keys ...crypto.Key) *crypto.KeyRing {
	t.Helper()
	r, err := crypto.NewKeyRing(keys)
	if err != nil {
		t.Fatalf("NewKeyRing() = %v", err)
	}
	return r
}

const (
	idA = "0b6e6f6a-8f3c-4a47-9d0e-2f5c1d7a9b10"
	idB = "1c7f7a7b-9a4d-4b58-8e1f-3a6d2e8b0c21"
)

func aad(id string) []byte { return []byte("mcp_servers:" + id) }

func TestNewKeyRing(t *testing.T) {
	tests := []struct {
		name string
		keys []crypto.Key
		ok   bool
	}{
		{name: "one", keys: []crypto.Key{key("k1", 1)}, ok: true},
		{name: "two", keys: []crypto.Key{key("k2", 2), key("k1", 1)}, ok: true},
		{name: "empty ring", keys: nil, ok: true},
		{name: "short key", keys: []crypto.Key{{ID: "k1", Secret: make([]byte, 16)}}},
		{name: "long key", keys: []crypto.Key{{ID: "k1", Secret: make([]byte, 33)}}},
		{name: "empty id", keys: []crypto.Key{key("", 1)}},
		{name: "long id", keys: []crypto.Key{key(strings.Repeat("k", 256), 1)}},
		{name: "duplicate id", keys: []crypto.Key{key("k1", 1), key("k1", 2)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := crypto.NewKeyRing(tt.keys)
			if (err == nil) != tt.ok {
				t.Fatalf("NewKeyRing() = %v, want ok %v", err, tt.ok)
			}
			if err != nil && strings.Contains(err.Error(), "\x01") {
				t.Errorf("NewKeyRing() error %q shows key material", err)
			}
		})
	}
}

func TestSealOpen(t *testing.T) {
	r := ring(t, key("k1", 1))
	plain := []byte(`{"type":"bearer","token":"supersecrettoken"}`)
	sealed, err := r.Seal(plain, aad(idA))
	if err != nil {
		t.Fatalf("Seal() = %v", err)
	}
	if bytes.Contains(sealed, []byte("supersecret")) {
		t.Fatalf("Seal() output contains the plaintext")
	}
	if sealed[0] != 1 || sealed[1] != 2 || string(sealed[2:4]) != "k1" {
		t.Errorf("Seal() header = %x, want version 1, id k1", sealed[:4])
	}
	again, _ := r.Seal(plain, aad(idA))
	if bytes.Equal(sealed, again) {
		t.Errorf("Seal() twice gave the same bytes: the nonce is not random")
	}

	tampered := func(i int) []byte {
		b := bytes.Clone(sealed)
		b[i] ^= 0x01
		return b
	}
	tests := []struct {
		name    string
		in      []byte
		aad     []byte
		wantErr error
	}{
		{name: "round trip", in: sealed, aad: aad(idA)},
		{name: "other server id", in: sealed, aad: aad(idB), wantErr: crypto.ErrDecrypt},
		{name: "no aad", in: sealed, aad: nil, wantErr: crypto.ErrDecrypt},
		{name: "tampered nonce", in: tampered(4), aad: aad(idA), wantErr: crypto.ErrDecrypt},
		{name: "tampered body", in: tampered(len(sealed) - 20), aad: aad(idA), wantErr: crypto.ErrDecrypt},
		{name: "tampered tag", in: tampered(len(sealed) - 1), aad: aad(idA), wantErr: crypto.ErrDecrypt},
		{name: "tampered version", in: tampered(0), aad: aad(idA), wantErr: crypto.ErrMalformed},
		{name: "tampered id", in: tampered(3), aad: aad(idA), wantErr: crypto.ErrUnknownKey},
		{name: "truncated", in: sealed[:len(sealed)-1], aad: aad(idA), wantErr: crypto.ErrDecrypt},
		{name: "truncated to header", in: sealed[:4], aad: aad(idA), wantErr: crypto.ErrMalformed},
		{name: "truncated in nonce", in: sealed[:10], aad: aad(idA), wantErr: crypto.ErrMalformed},
		{name: "truncated in id", in: sealed[:3], aad: aad(idA), wantErr: crypto.ErrMalformed},
		{name: "one byte", in: sealed[:1], aad: aad(idA), wantErr: crypto.ErrMalformed},
		{name: "empty", in: nil, aad: aad(idA), wantErr: crypto.ErrMalformed},
		{name: "zero id length", in: append([]byte{1, 0}, sealed[4:]...), aad: aad(idA), wantErr: crypto.ErrMalformed},
		{name: "unknown key", in: append([]byte{1, 2, 'k', '9'}, sealed[4:]...), aad: aad(idA), wantErr: crypto.ErrUnknownKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.Open(tt.in, tt.aad)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Open() = %v, want %v", err, tt.wantErr)
			}
			if err == nil && !bytes.Equal(got, plain) {
				t.Errorf("Open() = %q, want %q", got, plain)
			}
			if err != nil && got != nil {
				t.Errorf("Open() returned %d bytes with an error", len(got))
			}
		})
	}
}

func TestEmptyRing(t *testing.T) {
	full := ring(t, key("k1", 1))
	sealed, _ := full.Seal([]byte("x"), aad(idA))
	for _, r := range []*crypto.KeyRing{ring(t), nil} {
		if _, err := r.Seal([]byte("x"), aad(idA)); !errors.Is(err, crypto.ErrNoKeys) {
			t.Errorf("Seal() on an empty ring = %v, want %v", err, crypto.ErrNoKeys)
		}
		if _, err := r.Open(sealed, aad(idA)); !errors.Is(err, crypto.ErrNoKeys) {
			t.Errorf("Open() on an empty ring = %v, want %v", err, crypto.ErrNoKeys)
		}
		if r.IsPrimary(sealed) || r.PrimaryID() != "" {
			t.Errorf("empty ring: IsPrimary true or PrimaryID %q", r.PrimaryID())
		}
	}
}

func TestRotation(t *testing.T) {
	old := ring(t, key("k1", 1))
	sealed, err := old.Seal([]byte("secret"), aad(idA))
	if err != nil {
		t.Fatal(err)
	}
	if !old.IsPrimary(sealed) {
		t.Errorf("IsPrimary() under k1 = false")
	}

	rotated := ring(t, key("k2", 2), key("k1", 1))
	if rotated.PrimaryID() != "k2" {
		t.Errorf("PrimaryID() = %q, want k2", rotated.PrimaryID())
	}
	if rotated.IsPrimary(sealed) {
		t.Errorf("IsPrimary() of a k1 ciphertext in ring k2,k1 = true")
	}
	plain, err := rotated.Open(sealed, aad(idA))
	if err != nil || string(plain) != "secret" {
		t.Fatalf("Open() of a k1 ciphertext in ring k2,k1 = %q, %v", plain, err)
	}
	resealed, err := rotated.Seal(plain, aad(idA))
	if err != nil {
		t.Fatal(err)
	}
	if !rotated.IsPrimary(resealed) {
		t.Errorf("IsPrimary() after re-seal = false")
	}

	// Once k1 is removed, its ciphertexts fail with a clear error naming the id.
	onlyNew := ring(t, key("k2", 2))
	if _, err := onlyNew.Open(sealed, aad(idA)); !errors.Is(err, crypto.ErrUnknownKey) || !strings.Contains(err.Error(), `"k1"`) {
		t.Errorf("Open() with k1 removed = %v, want %v naming k1", err, crypto.ErrUnknownKey)
	}
	if got, err := onlyNew.Open(resealed, aad(idA)); err != nil || string(got) != "secret" {
		t.Errorf("Open() of the re-sealed ciphertext = %q, %v", got, err)
	}

	// A key with the same id but another secret does not open.
	impostor := ring(t, key("k1", 9))
	if _, err := impostor.Open(sealed, aad(idA)); !errors.Is(err, crypto.ErrDecrypt) {
		t.Errorf("Open() with another k1 = %v, want %v", err, crypto.ErrDecrypt)
	}
}

func TestIsPrimaryMalformed(t *testing.T) {
	r := ring(t, key("k1", 1))
	for _, in := range [][]byte{nil, {1}, {2, 2, 'k', '1'}, {1, 3, 'k', '1'}} {
		if r.IsPrimary(in) {
			t.Errorf("IsPrimary(%x) = true", in)
		}
	}
}

func TestKeyRingDoesNotKeepCallerSlice(t *testing.T) {
	k := key("k1", 1)
	r := ring(t, k)
	sealed, _ := r.Seal([]byte("secret"), aad(idA))
	for i := range k.Secret {
		k.Secret[i] = 0
	}
	if _, err := r.Open(sealed, aad(idA)); err != nil {
		t.Errorf("Open() after the caller zeroed its key = %v", err)
	}
}

func FuzzOpen(f *testing.F) {
	r, err := crypto.NewKeyRing([]crypto.Key{key("k2", 2), key("k1", 1)})
	if err != nil {
		f.Fatal(err)
	}
	const plain = `{"type":"none"}`
	sealed, _ := r.Seal([]byte(plain), aad(idA))
	f.Add(sealed, aad(idA))
	f.Add([]byte{}, []byte{})
	f.Add([]byte{1}, aad(idA))
	f.Add([]byte{1, 255, 'k'}, aad(idA))
	f.Add([]byte{1, 2, 'k', '1'}, aad(idB))
	f.Fuzz(func(t *testing.T, in, ad []byte) {
		got, err := r.Open(in, ad)
		// Each fuzz worker seals its own seed (random nonce), so the oracle
		// is the plaintext and the binding, not the ciphertext bytes.
		if err == nil && (string(got) != plain || !bytes.Equal(ad, aad(idA))) {
			t.Errorf("Open(%x, %q) = %q: accepted bytes that were never sealed", in, ad, got)
		}
		if err != nil && got != nil {
			t.Errorf("Open() returned bytes with an error")
		}
		_ = r.IsPrimary(in)
	})
}
