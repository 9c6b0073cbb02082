package tool

import "errors"

// MaxJSONDepth is the deepest nesting of arrays and objects that
// [Canonicalize], [CheckSchema] and [Schema.Validate] accept. A supported
// schema needs a depth of three; 64 leaves room for unsupported schemas to be
// reported as such while keeping recursion on hostile input shallow.
const MaxJSONDepth = 64

// Errors of [Canonicalize]. They carry a byte offset at most, never the
// offending text, because the input may be model or server controlled.
var (
	// ErrInvalidJSON means the input is not one well-formed JSON text in
	// UTF-8 (syntax errors, trailing data, invalid UTF-8, lone surrogate
	// escapes such as "\ud800").
	ErrInvalidJSON = errors.New("invalid JSON")
	// ErrDuplicateKey means an object names the same key twice (after
	// unescaping); RFC 8785 and I-JSON forbid it and two parsers could
	// otherwise disagree about which value counts.
	ErrDuplicateKey = errors.New("duplicate object key")
	// ErrNumberRange means a number does not fit a finite float64.
	ErrNumberRange = errors.New("number out of range")
	// ErrTooDeep means arrays and objects nest deeper than [MaxJSONDepth].
	ErrTooDeep = errors.New("JSON nested too deeply")
)

// Canonicalize returns the RFC 8785 (JSON Canonicalization Scheme) form of
// raw: object members sorted by the UTF-16 code units of their keys, no
// insignificant whitespace, numbers serialised as ECMAScript does, strings
// with only the mandatory escapes. Two texts with the same meaning have the
// same canonical bytes, so hashes over schemas do not change with key order
// or formatting. Numbers are IEEE 754 doubles as in RFC 8785: integers beyond
// 2^53 lose precision, underflow becomes 0, overflow is refused.
func Canonicalize(raw []byte) ([]byte, error) {
	p := getParser()
	defer p.release()
	root, fail := p.parse(raw)
	if fail.code != failNone {
		return nil, fail.err()
	}
	return p.canonical(root), nil
}
