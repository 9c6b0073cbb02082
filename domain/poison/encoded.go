package poison

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Encoded runs: base64 (standard or URL-safe, padded or not) of at least
// minBase64 characters, hex of at least minHex digits. A run is a
// finding only when it decodes to text (isText): a UUID, a git SHA, a
// SHA-256 digest or base64 of binary data decode to bytes that are not.
const (
	minBase64 = 24
	minHex    = 32
	// minTextBytes is the least decoded text that counts.
	minTextBytes = 12
)

// decodeAll appends to s.fields the text decoded from each encoded run
// of each field, and of those texts again, MaxDecodeDepth deep and at
// most MaxDecodes texts in all.
func (s *scan) decodeAll() {
	for i := 0; i < len(s.fields); i++ {
		v := s.fields[i]
		if v.depth >= MaxDecodeDepth {
			continue
		}
		for _, r := range encodedRuns(v.shown) {
			if s.decoded >= MaxDecodes {
				return
			}
			s.attempt++
			if text, kind, ok := decodeRun(r); ok {
				s.decoded++
				d := newView(v.where, text, v.depth+1)
				d.label = kind
				if v.label != "" {
					d.label = v.label + ", " + kind
				}
				d.source = r
				s.fields = append(s.fields, d)
			}
		}
	}
}

// encodedRuns are the runs of base64 or hex characters of s long enough
// to be read.
func encodedRuns(s string) []string {
	var runs []string
	for i := 0; i < len(s); {
		if !base64Char(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && base64Char(s[j]) {
			j++
		}
		for n := 0; n < 2 && j < len(s) && s[j] == '='; n++ {
			j++
		}
		if j-i >= minBase64 || j-i >= minHex {
			runs = append(runs, s[i:j])
		}
		i = j
	}
	return runs
}

func base64Char(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// decodeRun decodes a run as hex when it is all hex digits, else as
// base64, and reports the text it holds.
func decodeRun(r string) (string, string, bool) {
	if allHex(r) {
		if len(r) < minHex || len(r)%2 != 0 {
			return "", "", false
		}
		b, err := hex.DecodeString(r)
		return string(b), "hex", err == nil && isText(b)
	}
	if len(r) < minBase64 {
		return "", "", false
	}
	t := strings.TrimRight(r, "=")
	t = strings.NewReplacer("-", "+", "_", "/").Replace(t)
	b, err := base64.RawStdEncoding.DecodeString(t)
	if err != nil && len(t)%4 == 1 {
		b, err = base64.RawStdEncoding.DecodeString(t[:len(t)-1])
	}
	return string(b), "base64", err == nil && (isText(b) || nested(b))
}

// nested reports decoded bytes that are themselves one base64 run, an
// encoding of an encoding.
func nested(b []byte) bool {
	if len(b) < minBase64 {
		return false
	}
	for _, c := range b {
		if !base64Char(c) && c != '=' {
			return false
		}
	}
	return !allHex(string(b))
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// isText reports decoded bytes that read as prose: valid UTF-8, at least
// minTextBytes, every character graphic or white space but one in
// sixteen, at least one space, and letters and spaces at least three
// quarters of it (JSON such as a JWT header is not prose).
func isText(b []byte) bool {
	if len(b) < minTextBytes || !utf8.Valid(b) {
		return false
	}
	all, bad, prose, spaces := 0, 0, 0, 0
	for _, r := range string(b) {
		all++
		switch {
		case r == ' ':
			spaces++
			prose++
		case unicode.IsLetter(r):
			prose++
		case !unicode.IsGraphic(r) && !unicode.IsSpace(r):
			bad++
		}
	}
	return spaces > 0 && bad <= all/16 && 4*prose >= 3*all
}

// encoded reports a decoded text: the run and what it reads.
func (s *scan) encoded(v view) (string, bool) {
	if v.depth == 0 {
		return "", false
	}
	run := v.source
	if len(run) > 24 {
		run = run[:24] + "…"
	}
	return s.finish(v.where + ": " + run + " (" + v.label + " reads: " + v.raw + ")"), true
}
