package crypto_test

import (
	"errors"
	"testing"

	"github.com/codelotse/codelotse/adapters/crypto"
)

// TestTheKeyIDIsAuthenticated: the header is part of what GCM
// authenticates, so a ciphertext relabelled with another key id does not
// open, even when that id names the same key material (an operator who
// listed one key twice while rotating).
func TestTheKeyIDIsAuthenticated(t *testing.T) {
	r := ring(t, key("k1", 7), key("k2", 7))
	sealed, err := r.Seal([]byte("secret"), aad(idA))
	if err != nil {
		t.Fatal(err)
	}
	if string(sealed[2:4]) != "k1" {
		t.Fatalf("sealed under %q, want the primary k1", sealed[2:4])
	}
	relabelled := append([]byte(nil), sealed...)
	copy(relabelled[2:4], "k2")
	if _, err := r.Open(relabelled, aad(idA)); !errors.Is(err, crypto.ErrDecrypt) {
		t.Errorf("Open(relabelled to k2, same key material) = %v, want ErrDecrypt", err)
	}
	if plain, err := r.Open(sealed, aad(idA)); err != nil || string(plain) != "secret" {
		t.Errorf("Open(as sealed) = %q, %v", plain, err)
	}
}
