package portfake

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"strings"

	"github.com/codelotse/codelotse/ports"
)

// Cipher is a transparent stand-in for the key ring: "key|aad|hex".
// It checks key ids and the associated data like the real one, without
// the cryptography (adapters/crypto has its own tests).
type Cipher struct {
	Keys []string // keys[0] is the primary; empty: no keys
}

var ErrNoKeys = errors.New("fake: no keys")

func (c *Cipher) Seal(plain, aad []byte) ([]byte, error) {
	if len(c.Keys) == 0 {
		return nil, ErrNoKeys
	}
	return []byte(c.Keys[0] + "|" + string(aad) + "|" + hex.EncodeToString(plain)), nil
}

func (c *Cipher) Open(sealed, aad []byte) ([]byte, error) {
	if len(c.Keys) == 0 {
		return nil, ErrNoKeys
	}
	parts := strings.SplitN(string(sealed), "|", 3)
	if len(parts) != 3 {
		return nil, errors.New("fake: malformed")
	}
	if !slices.Contains(c.Keys, parts[0]) {
		return nil, errors.New("fake: unknown key")
	}
	if parts[1] != string(aad) {
		return nil, errors.New("fake: wrong aad")
	}
	return hex.DecodeString(parts[2])
}

func (c *Cipher) IsPrimary(sealed []byte) bool {
	return len(c.Keys) > 0 && strings.HasPrefix(string(sealed), c.Keys[0]+"|")
}

// Rotator is an in-memory ports.CredentialRotator.
type Rotator struct {
	Creds map[string][]byte
	// beforeReplace runs before each Replace (to simulate a concurrent writer).
	BeforeReplace func(serverID string)
	Batches       int
}

func (f *Rotator) Batch(_ context.Context, after string, limit int) ([]ports.EncryptedCredential, error) {
	f.Batches++
	ids := make([]string, 0, len(f.Creds))
	for id := range f.Creds {
		if id > after {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if len(ids) > limit {
		ids = ids[:limit]
	}
	out := make([]ports.EncryptedCredential, len(ids))
	for i, id := range ids {
		out[i] = ports.EncryptedCredential{ServerID: id, Encrypted: bytes.Clone(f.Creds[id])}
	}
	return out, nil
}

func (f *Rotator) Replace(_ context.Context, id string, old, enc []byte) (bool, error) {
	if f.BeforeReplace != nil {
		f.BeforeReplace(id)
	}
	if cur, ok := f.Creds[id]; !ok || old == nil || !bytes.Equal(cur, old) {
		return false, nil
	}
	f.Creds[id] = bytes.Clone(enc)
	return true, nil
}
