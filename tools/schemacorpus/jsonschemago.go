package schemacorpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// The module versions the jsonschema-go corpus is generated with: the
// ones go.mod requires (corpus_test.go checks it).
const (
	JSONSchemaGoVersion = "v0.4.3"
	GoSDKVersion        = "v1.8.0"
)

// jsonSchemaGoGenerator is the "generator" of jsonschema-go.json.
const jsonSchemaGoGenerator = "github.com/google/jsonschema-go@" + JSONSchemaGoVersion +
	" (jsonschema.ForType(t, &jsonschema.ForOptions{}), encoded with encoding/json without HTML escaping;" +
	" as github.com/modelcontextprotocol/go-sdk@" + GoSDKVersion + " mcp.AddTool infers a tool's input schema from its In type)"

// Paging is embedded in a case's struct: jsonschema-go flattens the
// promoted fields into the outer object.
type Paging struct {
	Limit  int    `json:"limit"`
	Cursor string `json:"cursor,omitempty"`
}

// goCase is one row of the jsonschema-go table: the Go type a tool
// handler takes as its In type; the source is the type's reflect string
// unless source says more.
type goCase struct {
	idiom     string
	typ       reflect.Type
	source    string
	supported bool
	reason    string
	valid     []string
	invalid   []string
}

var goCases = []goCase{
	{
		idiom: "plain-scalars",
		typ: reflect.TypeFor[struct {
			Query string  `json:"query" jsonschema:"the search terms"`
			Ratio float64 `json:"ratio"`
			Exact bool    `json:"exact"`
			Count int     `json:"count"`
		}](),
		supported: true,
		valid: []string{
			`{"query": "golang", "ratio": 0.5, "exact": true, "count": 3}`,
			`{"query": "", "ratio": -3, "exact": false, "count": -1}`,
		},
		invalid: []string{
			`{"query": 5, "ratio": 0.5, "exact": true, "count": 3}`,
			`{"query": "golang", "ratio": "0.5", "exact": true, "count": 3}`,
			`{"query": "golang", "ratio": 0.5, "exact": 1, "count": 3}`,
			`{"query": "golang", "ratio": 0.5, "exact": true, "count": 1.5}`,
			`{"query": null, "ratio": 0.5, "exact": true, "count": 3}`,
			`{"ratio": 0.5, "exact": true, "count": 3}`,
			`{"query": "golang", "ratio": 0.5, "exact": true, "count": 3, "extra": 1}`,
		},
	},
	{
		idiom: "omitempty",
		typ: reflect.TypeFor[struct {
			Query string `json:"query"`
			Limit int    `json:"limit,omitempty"`
			Tag   string `json:"tag,omitzero"`
		}](),
		supported: true,
		valid:     []string{`{"query": "a"}`, `{"query": "a", "limit": 10, "tag": "x"}`},
		invalid:   []string{`{"limit": 10}`, `{"query": "a", "limit": null}`, `{"query": "a", "tag": 1}`},
	},
	{
		idiom: "pointer",
		typ: reflect.TypeFor[struct {
			Limit *int    `json:"limit,omitempty"`
			Label *string `json:"label"`
		}](),
		supported: true,
		valid:     []string{`{"label": null}`, `{"label": "bug", "limit": 5}`, `{"label": "bug", "limit": null}`},
		invalid:   []string{`{}`, `{"label": 5}`, `{"label": null, "limit": 1.5}`, `{"label": null, "limit": "5"}`},
	},
	{
		idiom: "unsigned",
		typ: reflect.TypeFor[struct {
			Count uint   `json:"count"`
			Port  uint16 `json:"port"`
			Octet uint8  `json:"octet"`
			Size  uint32 `json:"size"`
		}](),
		supported: true,
		valid: []string{
			`{"count": 0, "port": 0, "octet": 0, "size": 0}`,
			`{"count": 9007199254740993, "port": 65535, "octet": 255, "size": 4294967295}`,
		},
		invalid: []string{
			`{"count": -1, "port": 1, "octet": 1, "size": 1}`,
			`{"count": 1, "port": 65536, "octet": 1, "size": 1}`,
			`{"count": 1, "port": 1, "octet": 256, "size": 1}`,
			`{"count": 1, "port": 1, "octet": 1, "size": 4294967296}`,
			`{"count": 1, "port": 80.5, "octet": 1, "size": 1}`,
		},
	},
	{
		idiom: "small-integers",
		typ: reflect.TypeFor[struct {
			Level  int8  `json:"level"`
			Delta  int16 `json:"delta"`
			Offset int32 `json:"offset"`
		}](),
		supported: true,
		valid: []string{
			`{"level": -128, "delta": -32768, "offset": -2147483648}`,
			`{"level": 127, "delta": 32767, "offset": 2147483647}`,
		},
		invalid: []string{
			`{"level": 128, "delta": 0, "offset": 0}`,
			`{"level": -129, "delta": 0, "offset": 0}`,
			`{"level": 0, "delta": 32768, "offset": 0}`,
			`{"level": 0, "delta": 0, "offset": 2147483648}`,
			`{"level": 0, "delta": 0, "offset": -2147483649}`,
		},
	},
	{
		idiom: "pointer-unsigned",
		typ: reflect.TypeFor[struct {
			Page *uint16 `json:"page,omitempty" jsonschema:"page number, from 0"`
		}](),
		supported: true,
		valid:     []string{`{}`, `{"page": null}`, `{"page": 0}`, `{"page": 65535}`},
		invalid:   []string{`{"page": -1}`, `{"page": 65536}`, `{"page": 1.5}`},
	},
	{
		idiom: "time",
		typ: reflect.TypeFor[struct {
			Since time.Time `json:"since"`
		}](),
		supported: true,
		valid:     []string{`{"since": "2024-05-06T07:08:09Z"}`, `{"since": "yesterday"}`},
		invalid:   []string{`{"since": 1714979289}`, `{"since": null}`},
	},
	{
		idiom: "embedded",
		typ: reflect.TypeFor[struct {
			Paging
			Query string `json:"query"`
		}](),
		source:    "; type Paging struct { Limit int `json:\"limit\"`; Cursor string `json:\"cursor,omitempty\"` }",
		supported: true,
		valid:     []string{`{"query": "a", "limit": 10}`, `{"query": "a", "limit": 10, "cursor": "c"}`},
		invalid:   []string{`{"query": "a"}`, `{"query": "a", "limit": 10, "Paging": {}}`},
	},
	{
		idiom: "ignored-fields",
		typ: reflect.TypeFor[struct {
			Query  string `json:"query"`
			Secret string `json:"-"`
			cache  string
		}](),
		supported: true,
		valid:     []string{`{"query": "a"}`},
		invalid:   []string{`{"query": "a", "Secret": "s"}`, `{"query": "a", "-": "s"}`},
	},
	{
		idiom: "nested-struct",
		typ: reflect.TypeFor[struct {
			Filter struct {
				Author string `json:"author"`
			} `json:"filter"`
		}](),
		reason: "nested object",
	},
	{
		idiom: "slice",
		typ: reflect.TypeFor[struct {
			Tags []string `json:"tags"`
		}](),
		reason: "array",
	},
	{
		idiom: "array",
		typ: reflect.TypeFor[struct {
			Point [2]float64 `json:"point"`
		}](),
		reason: "array",
	},
	{
		idiom: "map",
		typ: reflect.TypeFor[struct {
			Labels map[string]string `json:"labels"`
		}](),
		reason: "nested object",
	},
	{
		idiom: "any",
		typ: reflect.TypeFor[struct {
			Value any `json:"value"`
		}](),
		reason: "not a schema object",
	},
}

// JSONSchemaGo returns jsonschema-go.json: for each Go type of the table,
// the schema the go-sdk's AddTool infers for it (mcp/server.go, setSchema:
// jsonschema.ForType(rt, &jsonschema.ForOptions{})), encoded as the
// go-sdk's JSON-RPC layer encodes it (encoding/json, no HTML escaping).
func JSONSchemaGo() ([]byte, error) {
	f := File{Generator: jsonSchemaGoGenerator, Generated: true}
	seen := map[string]bool{}
	for _, gc := range goCases {
		if seen[gc.idiom] {
			return nil, fmt.Errorf("schemacorpus: duplicate idiom %s", gc.idiom)
		}
		seen[gc.idiom] = true
		if gc.supported == (gc.reason != "") || gc.supported != (len(gc.valid) > 0) || gc.supported != (len(gc.invalid) > 0) {
			return nil, fmt.Errorf("schemacorpus: %s: a supported case has valid and invalid arguments and no reason, a refused one the reverse", gc.idiom)
		}
		s, err := jsonschema.ForType(gc.typ, &jsonschema.ForOptions{})
		if err != nil {
			return nil, fmt.Errorf("schemacorpus: %s: %w", gc.idiom, err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			return nil, fmt.Errorf("schemacorpus: %s: %w", gc.idiom, err)
		}
		c := Case{
			Idiom:     gc.idiom,
			Source:    "jsonschema.For[" + gc.typ.String() + "]" + gc.source,
			Schema:    bytes.TrimRight(buf.Bytes(), "\n"),
			Supported: gc.supported,
			Reason:    gc.reason,
		}
		for _, v := range gc.valid {
			c.Valid = append(c.Valid, json.RawMessage(v))
		}
		for _, v := range gc.invalid {
			c.Invalid = append(c.Invalid, json.RawMessage(v))
		}
		f.Cases = append(f.Cases, c)
	}
	return Encode(f)
}
