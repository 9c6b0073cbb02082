package tool

import "github.com/go-json-experiment/json/jsontext"

// The two readers of BenchmarkJSONReaders (bench_test.go).

// ReadTree is this package's reader: the tree of src, its refusals.
func ReadTree(src []byte) bool {
	p := getParser()
	defer p.release()
	_, fail := p.parse(src)
	return fail.code == failNone
}

// CanonicalizeJSONText is jsontext's own RFC 8785 canonical form of src:
// the least a discovery must compute of each document it pins.
func CanonicalizeJSONText(src []byte) bool {
	v := jsontext.Value(append([]byte(nil), src...))
	return v.Canonicalize() == nil
}
