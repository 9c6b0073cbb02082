package tool

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
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
	if d.hash != "" {
		return d.hash
	}
	s, _ := hashOf(nil, d)
	return s
}

func (p *parser) hash(d Definition) string {
	var s string
	s, p.out = hashOf(p.out[:0], d)
	return s
}

// hashOf builds the hash input in buf (scratch space, may be nil) and
// returns the hex digest and the buffer.
func hashOf(buf []byte, d Definition) (string, []byte) {
	ann := d.annotations
	if ann == nil {
		ann = emptyAnnotations
	}
	buf = append(buf, hashTag...)
	buf = appendField(buf, d.name)
	buf = appendField(buf, d.description)
	buf = appendField(buf, d.inputSchema)
	buf = appendField(buf, ann)
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:]), buf
}

func appendField[T string | []byte](b []byte, field T) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(field)))
	return append(b, field...)
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
