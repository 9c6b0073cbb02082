package reviews

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/limits"
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
