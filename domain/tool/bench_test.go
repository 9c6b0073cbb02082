package tool_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/tool"
)

// benchRawTool is a tool as the MCP client hands it to the domain: the
// SDK has decoded the server's inputSchema and annotations and encoded
// them again with encoding/json (adapters/mcpclient, listed), so the
// bytes are compact JSON with sorted keys.
type benchRawTool struct {
	name, description   string
	schema, annotations json.RawMessage
	props               int
}

// benchWords is the vocabulary of names and descriptions.
var benchWords = strings.Fields(`page space issue project label user comment query filter limit
offset cursor sort order status priority owner team branch commit file path repository
title body summary version region cluster service metric window since until tag kind format
language include archived draft deleted public internal depth max min count page_size`)

func benchSentence(r *rand.Rand, minWords, maxWords int) string {
	n := minWords + r.IntN(maxWords-minWords+1)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = benchWords[r.IntN(len(benchWords))]
	}
	s := strings.Join(ws, " ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// benchProperty is one flat property as FastMCP/pydantic or the go-sdk
// emit it: a type, a description, often a title, sometimes a default or
// a string enum.
func benchProperty(r *rand.Rand, name string, required bool) map[string]any {
	p := map[string]any{"description": benchSentence(r, 4, 16)}
	if r.IntN(2) == 0 {
		p["title"] = strings.ToUpper(name[:1]) + strings.ReplaceAll(name[1:], "_", " ")
	}
	switch k := r.IntN(10); {
	case k < 5:
		p["type"] = "string"
		if !required && r.IntN(3) == 0 {
			p["default"] = benchWords[r.IntN(len(benchWords))]
		}
	case k < 7:
		p["type"] = "integer"
		if !required {
			p["default"] = 10 * (1 + r.IntN(10))
		}
	case k < 8:
		p["type"] = "number"
	case k < 9:
		p["type"] = "boolean"
		if !required {
			p["default"] = false
		}
	default:
		p["type"] = "string"
		n := 3 + r.IntN(4)
		enum := make([]string, n)
		for i := range enum {
			enum[i] = fmt.Sprintf("%s_%d", benchWords[r.IntN(len(benchWords))], i)
		}
		p["enum"] = enum
	}
	return p
}

// benchTools returns n realistic tool definitions: flat object schemas of
// 3–10 described properties, a description of one to three sentences and
// annotations. Every 17th tool is unsupported, cycling through a nested
// object, an array, a combinator, a constraint keyword and a name the
// model cannot call.
func benchTools(n int) []benchRawTool {
	r := rand.New(rand.NewPCG(4, 5))
	verbs := []string{"get", "list", "search", "create", "update", "delete", "describe", "find"}
	out := make([]benchRawTool, n)
	for i := range out {
		name := fmt.Sprintf("%s_%s_%d", verbs[r.IntN(len(verbs))], benchWords[r.IntN(len(benchWords))], i)
		nprops := 3 + r.IntN(8)
		props := map[string]any{}
		var required []string
		for len(props) < nprops {
			pname := benchWords[r.IntN(len(benchWords))]
			if _, dup := props[pname]; dup {
				continue
			}
			req := r.IntN(3) == 0
			props[pname] = benchProperty(r, pname, req)
			if req {
				required = append(required, pname)
			}
		}
		schema := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			schema["required"] = required
		}
		if r.IntN(2) == 0 {
			schema["additionalProperties"] = false
			schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
		}
		if i%17 == 16 {
			switch (i / 17) % 5 {
			case 0:
				props["options"] = map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}}}
			case 1:
				props["labels"] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
			case 2:
				props["ref"] = map[string]any{"anyOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "null"}}, "default": nil}
			case 3:
				props["since"] = map[string]any{"type": "string", "format": "date-time"}
			case 4:
				name = "files." + name
			}
		}
		ann := map[string]any{"readOnlyHint": r.IntN(3) > 0, "idempotentHint": r.IntN(2) == 0,
			"title": strings.TrimSuffix(benchSentence(r, 2, 4), ".")}
		if r.IntN(2) == 0 {
			ann["openWorldHint"] = false
		}
		if r.IntN(4) == 0 {
			ann["destructiveHint"] = r.IntN(2) == 0
		}
		s, err := json.Marshal(schema)
		if err != nil {
			panic(err)
		}
		a, err := json.Marshal(ann)
		if err != nil {
			panic(err)
		}
		desc := benchSentence(r, 8, 20)
		if r.IntN(2) == 0 {
			desc += " " + benchSentence(r, 6, 24) + " " + benchSentence(r, 4, 12)
		}
		out[i] = benchRawTool{name: name, description: desc, schema: s, annotations: a, props: len(props)}
	}
	return out
}

// discover is what a discovery does per listed tool: the client builds
// the definition (canonical schema and annotations), the app assesses it
// (model name, schema rules, write capability, hash).
func discover(tools []benchRawTool) (supported int) {
	for _, t := range tools {
		d, err := tool.NewDefinition(t.name, t.description, t.schema, t.annotations)
		if err != nil {
			panic(err)
		}
		if tool.Assess("wiki", d).Supported {
			supported++
		}
	}
	return supported
}

// BenchmarkDiscovery200Tools measures the CPU cost of one discovery of
// the maximum 200 tools (limits.MaxListedTools) once the network is done:
// NewDefinition (canonicalise schema and annotations) and Assess (model
// name, CheckSchema, WriteCapable, Hash) for each. The sub-benchmarks
// take one schema of the set (8 properties) through Canonicalize,
// CheckSchema and NewDefinition alone (the latter reads the schema once for
// its canonical form, schema check and hash); Hash of a built definition
// returns the pin computed then.
func BenchmarkDiscovery200Tools(b *testing.B) {
	tools := benchTools(200)
	// Every 17th tool is special (benchTools): a nested object, an array
	// or a dotted name is refused; its nullable and format variants are
	// flat scalar idioms and supported (docs/schemas.md).
	const wantUnsupported = 7
	if got := 200 - discover(tools); got != wantUnsupported {
		b.Fatalf("unsupported tools = %d, want %d", got, wantUnsupported)
	}
	var schemaBytes int
	for _, t := range tools {
		schemaBytes += len(t.schema) + len(t.annotations) + len(t.description)
	}
	b.Run("discovery", func(b *testing.B) {
		b.SetBytes(int64(schemaBytes))
		b.ReportAllocs()
		for b.Loop() {
			discover(tools)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/200, "ns/tool")
	})

	one := tools[0]
	for _, t := range tools {
		if t.props == 8 && tool.Assess("wiki", mustDef(b, t)).Supported {
			one = t // first supported tool with 8 properties
			break
		}
	}
	d := mustDef(b, one)
	b.Run("Canonicalize", func(b *testing.B) {
		b.SetBytes(int64(len(one.schema)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tool.Canonicalize(one.schema); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("CheckSchema", func(b *testing.B) {
		b.SetBytes(int64(len(one.schema)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := tool.CheckSchema(one.schema); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("NewDefinition", func(b *testing.B) {
		b.SetBytes(int64(len(one.schema) + len(one.annotations)))
		b.ReportAllocs()
		for b.Loop() {
			mustDef(b, one)
		}
	})
	b.Run("Hash", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tool.Hash(d)
		}
	})
}

func mustDef(b *testing.B, t benchRawTool) tool.Definition {
	b.Helper()
	d, err := tool.NewDefinition(t.name, t.description, t.schema, t.annotations)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkJSONReaders reads the JSON a discovery of 200 tools reads
// (each tool's schema and annotations once, as NewDefinition does) two
// ways: "floor" is jsontext's own canonical form of each document (RFC
// 8785), the least a discovery computes of what it pins; "reader" is this
// package's reader building its tree (reader_bench_test.go).
// docs/BENCHMARKS.md sets BenchmarkDiscovery200Tools/discovery against
// the floor (at most 2×).
func BenchmarkJSONReaders(b *testing.B) {
	var docs [][]byte
	var n int
	for _, t := range benchTools(200) {
		docs = append(docs, t.schema, t.annotations)
		n += len(t.schema) + len(t.annotations)
	}
	for _, r := range []struct {
		name string
		read func([]byte) bool
	}{{"floor", tool.CanonicalizeJSONText}, {"reader", tool.ReadTree}} {
		for _, d := range docs {
			if !r.read(d) {
				b.Fatalf("%s refused %s", r.name, d)
			}
		}
		b.Run(r.name, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range docs {
					r.read(d)
				}
			}
		})
	}
}
