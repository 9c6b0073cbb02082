package reviews

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
)

// A tool result reaches the model once. The official SDKs answer many
// tools twice: FastMCP (Python SDK) sends a str result as a text item and
// as structuredContent {"result": text}, an int or a list as its JSON text
// and {"result": value}; the TypeScript and Go SDKs send structured
// content with JSON.stringify of it (or json.Marshal) as the text item.
// Passing both would show the model the same result twice and charge the
// run's budget twice, so [resultText] keeps the text items alone when
// structuredContent only repeats them, and both otherwise, as before.
//
// The rule is deliberately narrow. structuredContent repeats the text when
// there is exactly one text item T of at most limits.ToolResultCap bytes,
// structuredContent is one JSON value S (valid UTF-8, no duplicate member
// names), and for S itself or, when S is an object whose only member is
// "result", for that member's value V:
//
//   - V is a JSON string equal to T, character for character (FastMCP's
//     str result: T is the raw string, nothing trimmed or normalised); or
//   - T is exactly one JSON value (JSON whitespace around it allowed; valid
//     UTF-8, as the decoder would otherwise replace bytes) equal to V:
//     the same type; strings equal after unescaping; numbers equal as
//     IEEE-754 doubles (as the go-sdk and JavaScript read them, so the
//     double the go-sdk turned the server's number into still matches the
//     server's text); arrays element by element in order; objects with
//     the same member names, in any order, and equal members.
//
// Anything else keeps both: two or more text items (however they join),
// a text that differs by one character or only in whitespace inside a
// string, extra members next to "result", a number that does not fit a
// double, JSON nested deeper than maxRepeatDepth, and a text with
// duplicate member names (its two values could not both match S). A text
// over the result cap is not compared at all: it is too large alone. What
// is dropped is only ever the structured copy; the text that is kept is
// what the secret scan, the caps and the byte budget then see, so nothing
// shown to the model escapes the scanner.

// maxRepeatDepth bounds the nesting compared; deeper JSON keeps both.
const maxRepeatDepth = 64

// repeatsText reports whether structured only repeats the text items
// (the rule above).
func repeatsText(texts []string, structured []byte) bool {
	if len(texts) != 1 || len(structured) == 0 {
		return false
	}
	t := texts[0]
	if len(t) > limits.ToolResultCap {
		return false
	}
	s, ok := decodeJSON(structured)
	if !ok {
		return false
	}
	candidates := []any{s}
	if obj, ok := s.(map[string]any); ok && len(obj) == 1 {
		if v, ok := obj["result"]; ok {
			candidates = append(candidates, v)
		}
	}
	for _, c := range candidates {
		if str, ok := c.(string); ok && str == t {
			return true
		}
	}
	v, ok := decodeJSON([]byte(t))
	if !ok {
		return false
	}
	for _, c := range candidates {
		if jsonEqual(c, v) {
			return true
		}
	}
	return false
}

// decodeJSON reads data as exactly one JSON value (numbers as doubles),
// refusing invalid JSON or UTF-8, trailing data, duplicate member names,
// numbers out of a double's range and nesting deeper than maxRepeatDepth.
func decodeJSON(data []byte) (any, bool) {
	if !utf8.Valid(data) || !json.Valid(data) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return decodeValue(dec, 0) // json.Valid: nothing follows the one value
}

// decodeValue reads one value of data that json.Valid accepted.
func decodeValue(dec *json.Decoder, depth int) (any, bool) {
	tok, err := dec.Token()
	if err != nil {
		return nil, false
	}
	switch tok := tok.(type) {
	case json.Delim:
		if depth >= maxRepeatDepth {
			return nil, false
		}
		if tok == '[' {
			arr := []any{}
			for dec.More() {
				v, ok := decodeValue(dec, depth+1)
				if !ok {
					return nil, false
				}
				arr = append(arr, v)
			}
			_, err := dec.Token() // ']'
			return arr, err == nil
		}
		obj := map[string]any{} // '{': valid JSON never has a closing delimiter here
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, false
			}
			k, _ := kt.(string)
			if _, dup := obj[k]; dup {
				return nil, false
			}
			v, ok := decodeValue(dec, depth+1)
			if !ok {
				return nil, false
			}
			obj[k] = v
		}
		_, err := dec.Token() // '}'
		return obj, err == nil
	case json.Number:
		f, err := strconv.ParseFloat(string(tok), 64)
		return f, err == nil
	default: // string, bool, nil
		return tok, true
	}
}

// jsonEqual compares two values of decodeJSON.
func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		bo, ok := b.(map[string]any)
		if !ok || len(a) != len(bo) {
			return false
		}
		for k, av := range a {
			bv, ok := bo[k]
			if !ok || !jsonEqual(av, bv) {
				return false
			}
		}
		return true
	case []any:
		ba, ok := b.([]any)
		if !ok || len(a) != len(ba) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], ba[i]) {
				return false
			}
		}
		return true
	default: // string, float64, bool, nil: comparable
		return a == b
	}
}

// readText is a tool's answer as the run reads it, once: text is what the
// model reads (the text items and structuredContent as [resultText]
// joins them, with the characters [removeInvisible] takes out), view the
// same text with its JSON escapes decoded: JSON text items and
// structuredContent carry strings escaped ("\u0041KIA…", a "\/" inside a
// token), and the model reads them decoded. The scanner reads both.
type readText struct {
	text, view string
	removed    int
}

// readResult reads raw, the text [resultText] joined.
func readResult(raw string) readText {
	text, removed := removeInvisible(raw)
	view, _ := unescapeJSON(text)
	return readText{text: text, view: view, removed: removed}
}

// escaped reports a view that differs from the text.
func (t readText) escaped() bool { return t.view != t.text }

// resultText keeps the text items and structuredContent (as JSON),
// structuredContent only when it does not merely repeat the text
// ([repeatsText], review_result.go); images, audio, resources and links
// were dropped by the adapter. It is all that the result scan, the caps,
// the byte budget and the model see.
func resultText(out ports.ToolResult) string {
	parts := append([]string{}, out.Texts...)
	if len(out.Structured) > 0 && !repeatsText(out.Texts, out.Structured) {
		parts = append(parts, string(out.Structured))
	}
	return strings.Join(parts, "\n\n")
}

// unescapeJSON replaces every JSON string escape in s (\" \\ \/ \b \f
// \n \r \t and \uXXXX, surrogate pairs joined, a lone surrogate as
// U+FFFD) by the character it stands for, wherever it stands: in a JSON
// document or in prose around one. Anything else is kept as written.
// changed is false when s holds no escape.
func unescapeJSON(s string) (view string, changed bool) {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		if r, n := jsonEscape(s, i); n > 0 {
			b.WriteRune(r)
			i += n
			changed = true
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String(), changed
}

// jsonEscape reads the JSON string escape at s[i:]: the character it
// stands for (a surrogate pair joined, a lone surrogate as U+FFFD) and its
// length, 0 when s[i:] starts none.
func jsonEscape(s string, i int) (rune, int) {
	if i+1 >= len(s) || s[i] != '\\' {
		return 0, 0
	}
	if r, ok := simpleEscapes[s[i+1]]; ok {
		return rune(r), 2
	}
	r1, ok := hex4(s, i+2)
	if s[i+1] != 'u' || !ok {
		return 0, 0
	}
	if !utf16.IsSurrogate(r1) {
		return r1, 6
	}
	if r2, ok := hex4(s, i+8); ok && s[i+6] == '\\' && s[i+7] == 'u' {
		if dec := utf16.DecodeRune(r1, r2); dec != utf8.RuneError {
			return dec, 12
		}
	}
	return utf8.RuneError, 6
}

// removeInvisible is the result text the model reads (MC3): without the
// characters [tool.StripInvisible] removes, nor the JSON escapes of such
// characters (\u200b, \u202e, a tag character as \udb40\udc41, \r),
// which a model reads decoded; n counts what it removed, an escape as one.
// The text is built from the left, and whenever it ends with an escape of
// an invisible character that escape is taken off, so an escape completed
// by the removal of another ("\u20\u200b0b") goes too. A backslash starts
// an escape when an even number of backslashes precedes it.
func removeInvisible(s string) (string, int) {
	s, n := tool.StripInvisible(s)
	if !mayEscapeInvisible(s) {
		return s, n
	}
	out := make([]byte, 0, len(s))
	starts := make([]bool, 0, len(s)) // out[i] is a backslash that starts an escape
	for i := 0; i < len(s); i++ {
		c := s[i]
		out = append(out, c)
		starts = append(starts, c == '\\' && (len(starts) == 0 || !starts[len(starts)-1]))
		for _, w := range [...]int{12, 6, 2} {
			p := len(out) - w
			if p < 0 || !starts[p] {
				continue
			}
			if r, m := jsonEscape(string(out[p:]), 0); m == w && tool.Invisible(r) {
				out, starts = out[:p], starts[:p]
				n++
				break
			}
		}
	}
	return string(out), n
}

// mayEscapeInvisible reports a backslash before u, b, f or r: the only
// JSON escapes that can stand for an invisible character.
func mayEscapeInvisible(s string) bool {
	for i := strings.IndexByte(s, '\\'); i >= 0 && i+1 < len(s); {
		if strings.IndexByte("ubfr", s[i+1]) >= 0 {
			return true
		}
		j := strings.IndexByte(s[i+2:], '\\')
		if j < 0 {
			return false
		}
		i += 2 + j
	}
	return false
}

// simpleEscapes are JSON's one-letter escapes and what they stand for.
var simpleEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 reads the four hex digits of a \u escape at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s[i:i+4], 16, 16)
	return rune(v), err == nil
}
