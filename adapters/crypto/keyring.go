// Package crypto is the credential cipher: a key ring of AES-256-GCM keys
// that implements [ports.Cipher].
//
// It uses the standard library (crypto/aes, crypto/cipher, crypto/rand)
// and not tink-go on purpose: tink would bring a dependency tree (protobuf
// and its own key-set format) into a security product for what is a few
// dozen lines here. AES-GCM with a random 96-bit nonce is safe for our
// volume: a key seals one credential per server write, far below the
// 2^32 messages per key at which random nonces start to risk a collision.
// The key-id framing (which key sealed a ciphertext, so old keys keep
// decrypting after a rotation) is ours and documented at [KeyRing.Seal].
package crypto

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"

	"github.com/codelotse/codelotse/ports"
)

// KeySize is the length of every key: AES-256.
const KeySize = 32

// version is the first byte of every ciphertext this package writes.
const version byte = 1

const (
	nonceSize = 12 // the standard GCM nonce, 96 bits
	tagSize   = 16
	maxIDLen  = 255 // the id length is one byte
)

// Errors of the key ring. None of them contains key material or plaintext.
var (
	// ErrNoKeys: the ring is empty (QUAVON_ENCRYPTION_KEYS is not set), so
	// no credential can be sealed or opened.
	ErrNoKeys = errors.New("no encryption keys are configured (QUAVON_ENCRYPTION_KEYS)")
	// ErrUnknownKey: the ciphertext names a key id that is not in the ring,
	// typically a key removed from QUAVON_ENCRYPTION_KEYS before
	// `codelotse keys rotate` re-encrypted everything under the primary.
	ErrUnknownKey = errors.New("ciphertext names a key that is not in the key ring")
	// ErrMalformed: the input is not a ciphertext of this format (wrong
	// version, truncated).
	ErrMalformed = errors.New("malformed ciphertext")
	// ErrDecrypt: authentication failed: the ciphertext was altered, or it
	// was sealed with other associated data (another row).
	ErrDecrypt = errors.New("ciphertext cannot be decrypted: tampered or bound to another row")
)

// Key is one entry of the ring: an id (stored in every ciphertext it
// seals) and a 32-byte secret.
type Key struct {
	ID     string
	Secret []byte
}

// KeyRing seals under its primary key (the first) and opens with any of
// its keys. It is immutable after [NewKeyRing] and safe for concurrent use.
type KeyRing struct {
	primary string
	aeads   map[string]cipher.AEAD
}

var _ ports.Cipher = (*KeyRing)(nil)

// NewKeyRing builds a ring from keys; keys[0] is the primary key. Each
// secret must be [KeySize] bytes and each id 1–255 bytes and unique; the
// error names the offending id, never a secret. An empty keys gives an
// empty ring, whose Seal and Open return [ErrNoKeys]: an instance without
// keys still runs, and servers without a credential still work.
func NewKeyRing(keys []Key) (*KeyRing, error) {
	r := &KeyRing{aeads: make(map[string]cipher.AEAD, len(keys))}
	for i, k := range keys {
		if k.ID == "" || len(k.ID) > maxIDLen {
			return nil, fmt.Errorf("key %d: id must be 1 to %d bytes", i+1, maxIDLen)
		}
		if _, dup := r.aeads[k.ID]; dup {
			return nil, fmt.Errorf("key %s: duplicate id", strconv.Quote(k.ID))
		}
		if len(k.Secret) != KeySize {
			return nil, fmt.Errorf("key %s: must be %d bytes, not %d", strconv.Quote(k.ID), KeySize, len(k.Secret))
		}
		// aes.NewCipher copies the key schedule; the caller's slice is not kept.
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", strconv.Quote(k.ID), err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", strconv.Quote(k.ID), err)
		}
		r.aeads[k.ID] = aead
		if i == 0 {
			r.primary = k.ID
		}
	}
	return r, nil
}

// Seal encrypts plaintext under the primary key with a random nonce,
// binding associatedData (for credentials "mcp_servers:<id>"). The result
// is
//
//	version (1 byte, 1) | id length n (1 byte) | key id (n bytes) | nonce (12 bytes) | GCM ciphertext and tag
//
// The header (version, length, id) is authenticated too: it is prepended
// to associatedData, so a ciphertext cannot be relabelled.
func (r *KeyRing) Seal(plaintext, associatedData []byte) ([]byte, error) {
	if r == nil || r.primary == "" {
		return nil, ErrNoKeys
	}
	aead := r.aeads[r.primary]
	header := make([]byte, 0, 2+len(r.primary))
	header = append(header, version, byte(len(r.primary)))
	header = append(header, r.primary...)
	out := make([]byte, len(header)+nonceSize, len(header)+nonceSize+len(plaintext)+tagSize)
	copy(out, header)
	nonce := out[len(header):]
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("reading a nonce: %w", err)
	}
	return aead.Seal(out, nonce, plaintext, aad(header, associatedData)), nil
}

// Open decrypts a ciphertext of [KeyRing.Seal] with the key it names and
// the same associatedData. Errors: [ErrNoKeys], [ErrMalformed],
// [ErrUnknownKey] (wrapped, with the id), [ErrDecrypt].
func (r *KeyRing) Open(ciphertext, associatedData []byte) ([]byte, error) {
	if r == nil || r.primary == "" {
		return nil, ErrNoKeys
	}
	header, id, rest, err := parse(ciphertext)
	if err != nil {
		return nil, err
	}
	aead, ok := r.aeads[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownKey, strconv.Quote(id))
	}
	if len(rest) < nonceSize+tagSize {
		return nil, ErrMalformed
	}
	plain, err := aead.Open(nil, rest[:nonceSize], rest[nonceSize:], aad(header, associatedData))
	if err != nil {
		return nil, ErrDecrypt
	}
	return plain, nil
}

// IsPrimary reports whether ciphertext names the primary key. It does not
// authenticate it; Open does.
func (r *KeyRing) IsPrimary(ciphertext []byte) bool {
	if r == nil || r.primary == "" {
		return false
	}
	_, id, _, err := parse(ciphertext)
	return err == nil && id == r.primary
}

// PrimaryID is the id of the primary key ("" for an empty ring), for
// `codelotse keys rotate` to print.
func (r *KeyRing) PrimaryID() string {
	if r == nil {
		return ""
	}
	return r.primary
}

// parse splits a ciphertext into its header, key id and the rest (nonce
// and sealed bytes).
func parse(b []byte) (header []byte, id string, rest []byte, err error) {
	if len(b) < 2 || b[0] != version {
		return nil, "", nil, ErrMalformed
	}
	n := int(b[1])
	if n == 0 || len(b) < 2+n {
		return nil, "", nil, ErrMalformed
	}
	return b[:2+n], string(b[2 : 2+n]), b[2+n:], nil
}

// aad is header followed by associatedData. The header's length is fixed
// by its own length byte, so the concatenation is unambiguous.
func aad(header, associatedData []byte) []byte {
	return bytes.Join([][]byte{header, associatedData}, nil)
}
