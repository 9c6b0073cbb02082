package tool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Arguments are tool-call arguments read once by [Schema.Check]: the
// canonical JSON that is sent (RFC 8785), its SHA-256 and the decoded
// string values the egress check reads. Only Check builds them, so a
// value of this type has passed the schema.
type Arguments struct {
	canonical []byte
	hash      string
	n         int
	strings   []string
}

// recordOf is what a call record keeps of b: its hash and length.
func recordOf(b []byte) Arguments { return Arguments{hash: hexSHA256(b), n: len(b)} }

// Canonical returns the arguments as sent: their canonical JSON object.
func (a Arguments) Canonical() json.RawMessage { return clone(a.canonical) }

// Hash is the lowercase hex SHA-256 of [Arguments.Canonical], or of the
// bytes as given when they were not JSON.
func (a Arguments) Hash() string { return a.hash }

// Strings returns the decoded string values, in the canonical order of
// their keys.
func (a Arguments) Strings() []string { return append([]string(nil), a.strings...) }

// Len is the length in bytes of what [Arguments.Hash] covers.
func (a Arguments) Len() int { return a.n }

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
