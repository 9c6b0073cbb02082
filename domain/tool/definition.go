package tool

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/codelotse/codelotse/domain/field"
)

// Definition is a tool as a server reports it in a live discovery. It is
// untrusted: every field comes from the MCP server. The input schema and the
// annotations are held in canonical form (see [Canonicalize]); the verdict
// of [CheckSchema] on the schema and the [Hash] are computed once, when the
// definition is built.
type Definition struct {
	name        string
	description string
	inputSchema []byte
	annotations []byte // nil when the server sent none (or null)
	hints       hints

	checked   bool              // schema and schemaErr hold CheckSchema's verdict
	schema    Schema            // when schemaErr is nil
	schemaErr *UnsupportedError // why the schema is unsupported
	hash      string
}

// hints are the parsed behaviour annotations. malformed is set when the
// annotations are not an object or a hint is not a boolean: the tool is then
// treated as write-capable, since a server that cannot state the hint
// properly has not stated that it only reads.
type hints struct {
	readOnly    *bool
	destructive *bool
	malformed   bool
}

// NewDefinition builds a Definition from what a server reported. The name
// must be non-empty UTF-8. The input schema must be JSON that
// [Canonicalize] accepts; otherwise the error is an [*UnsupportedError], so
// discovery can list the tool as unsupported. Annotations may be empty or
// JSON null (absent) or any JSON value; anything but an object makes the
// tool write-capable (see [WriteCapable]).
//
// The schema is read once: its canonical form, the schema check (as
// [CheckSchema] reports it on the canonical form) and the hash come from
// that one pass.
func NewDefinition(name, description string, inputSchema, annotations json.RawMessage) (Definition, error) {
	if name == "" {
		return Definition{}, &field.Error{Field: "name", Reason: "must not be empty"}
	}
	if !utf8.ValidString(name) {
		return Definition{}, &field.Error{Field: "name", Reason: "must be valid UTF-8"}
	}
	p := getParser()
	defer p.release()
	root, fail := p.parse(inputSchema)
	if fail.code != failNone {
		return Definition{}, unsupported(fail.problem())
	}
	d := Definition{name: name, description: description, checked: true}
	d.inputSchema = p.canonical(root)
	d.schema, d.schemaErr = p.checkSchema(root, true)
	d.schema.canonical = d.inputSchema
	var err error
	if d.annotations, d.hints, err = p.annotations(annotations); err != nil {
		return Definition{}, &field.Error{Field: "annotations", Reason: err.Error()}
	}
	d.hash = p.hash(d)
	return d, nil
}

// checkedSchema is [CheckSchema] of the definition's schema.
func (d Definition) checkedSchema() (Schema, error) {
	if !d.checked {
		return CheckSchema(d.inputSchema)
	}
	if d.schemaErr != nil {
		return Schema{}, d.schemaErr
	}
	return d.schema, nil
}

// canonicalAnnotations returns the canonical annotations (nil when absent)
// and the hints parsed from them.
func canonicalAnnotations(raw []byte) ([]byte, hints, error) {
	p := getParser()
	defer p.release()
	return p.annotations(raw)
}

func (p *parser) annotations(raw []byte) ([]byte, hints, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, hints{}, nil
	}
	n, fail := p.parse(raw)
	if fail.code != failNone {
		return nil, hints{}, fail.err()
	}
	if p.nodes[n].kind == kindNull {
		return nil, hints{}, nil
	}
	return p.canonical(n), p.hints(n), nil
}

func (p *parser) hints(n int) hints {
	if p.nodes[n].kind != kindObject {
		return hints{malformed: true}
	}
	var h hints
	for _, m := range []struct {
		key string
		dst **bool
	}{{"readOnlyHint", &h.readOnly}, {"destructiveHint", &h.destructive}} {
		v := p.get(n, m.key)
		switch {
		case v < 0:
		case p.nodes[v].kind == kindBool:
			b := p.nodes[v].b
			*m.dst = &b
		default:
			h.malformed = true
		}
	}
	return h
}

// Name is the tool's name on its server.
func (d Definition) Name() string { return d.name }

// Description is the server's own description. It is untrusted and never
// shown to the model; the admin's text is (see [ModelDescription]).
func (d Definition) Description() string { return d.description }

// InputSchema returns a copy of the canonical input schema.
func (d Definition) InputSchema() json.RawMessage { return clone(d.inputSchema) }

// Annotations returns a copy of the canonical annotations, or nil when the
// server sent none.
func (d Definition) Annotations() json.RawMessage { return clone(d.annotations) }

// ReadOnlyHint is the boolean readOnlyHint annotation, or nil when absent
// or not a boolean.
func (d Definition) ReadOnlyHint() *bool { return cloneBool(d.hints.readOnly) }

// DestructiveHint is the boolean destructiveHint annotation, or nil when
// absent or not a boolean.
func (d Definition) DestructiveHint() *bool { return cloneBool(d.hints.destructive) }

// WriteCapable reports whether d may change data, by its annotations (MC7):
// true unless readOnlyHint is true, and always when destructiveHint is true.
// Annotations that are absent, not a JSON object, or carry a non-boolean
// hint count as write-capable. The answer is only as honest as the server;
// the admin still confirms write-capable tools.
func WriteCapable(d Definition) bool {
	return d.hints.writeCapable()
}

func (h hints) writeCapable() bool {
	if h.malformed || h.readOnly == nil || !*h.readOnly {
		return true
	}
	return h.destructive != nil && *h.destructive
}

func clone(b []byte) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

func cloneBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}
