package tool

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// hashTag separates this hash from every other SHA-256 the product
// computes; bump the version when the framing changes (docs/TOOL-HASH.md).
const hashTag = "codelotse-tool-v1\x00"

// emptyAnnotations stands in for absent annotations, so a server that
// starts sending "{}" (or stops) does not look like a changed tool: both
// mean "no hints" and both make the tool write-capable.
var emptyAnnotations = []byte("{}")

// Hash returns the pin of d (MC4): lowercase hex SHA-256 over
//
//	"codelotse-tool-v1" 0x00
//	u64be(len(name))        name
//	u64be(len(description)) description
//	u64be(len(schema))      canonical input schema
//	u64be(len(annotations)) canonical annotations, "{}" when absent
//
// where lengths are byte counts as 8-byte big-endian integers and strings
// are their UTF-8 bytes as reported. The length prefixes make the framing
// unambiguous: moving bytes from one field to the next changes the hash.
func Hash(d Definition) string {
	h := sha256.New()
	h.Write([]byte(hashTag))
	ann := d.annotations
	if ann == nil {
		ann = emptyAnnotations
	}
	for _, field := range [][]byte{[]byte(d.name), []byte(d.description), d.inputSchema, ann} {
		writeField(h, field)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// validHash reports whether s looks like a [Hash] result.
func validHash(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
