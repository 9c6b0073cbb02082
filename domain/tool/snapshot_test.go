package tool_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/tool"
)

var approved = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestNewSnapshot(t *testing.T) {
	live := mustDefinition(t, "search", "SERVER TEXT", searchSchema, `{"readOnlyHint":true}`)
	s, err := tool.NewSnapshot("wiki", live, " Admin text\u200b ", approved)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		got, want any
	}{
		{"Name", s.Name(), "search"},
		{"Description", s.Description(), "Admin text"},
		{"InputSchema", string(s.InputSchema()), string(live.InputSchema())},
		{"Annotations", string(s.Annotations()), `{"readOnlyHint":true}`},
		{"WriteCapable", s.WriteCapable(), false},
		{"Hash", s.Hash(), tool.Hash(live)},
		{"ApprovedAt", s.ApprovedAt(), approved},
		{"Schema", len(s.Schema().Properties()), 1},
		{"Matches live", s.Matches(live), true},
		{"Matches changed description", s.Matches(mustDefinition(t, "search", "SERVER TEXT!", searchSchema, `{"readOnlyHint":true}`)), false},
		{"Matches now destructive", s.Matches(mustDefinition(t, "search", "SERVER TEXT", searchSchema, `{"readOnlyHint":true,"destructiveHint":true}`)), false},
		{"Matches zero", s.Matches(tool.Definition{}), false},
		{"zero Snapshot matches nothing", tool.Snapshot{}.Matches(tool.Definition{}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("%s() = %v, want %v", tt.name, tt.got, tt.want)
			}
		})
	}
}

func TestNewSnapshotRefuses(t *testing.T) {
	ok := mustDefinition(t, "search", "", searchSchema, "")
	tests := []struct {
		name   string
		server string
		d      tool.Definition
		desc   string
		at     time.Time
		check  func(error) bool
	}{
		{"unsupported schema", "wiki", mustDefinition(t, "search", "", `{"type":"object","properties":{"a":{"type":"array"}}}`, ""), "", approved,
			func(err error) bool { var e *tool.UnsupportedError; return errors.As(err, &e) }},
		{"name too long", "wiki", mustDefinition(t, strings.Repeat("s", limits.MaxModelToolNameLen), "", searchSchema, ""), "", approved,
			func(err error) bool { var e *tool.NameError; return errors.As(err, &e) }},
		{"empty server", "", ok, "", approved,
			func(err error) bool { var e *tool.NameError; return errors.As(err, &e) }},
		{"zero definition", "wiki", tool.Definition{}, "", approved,
			func(err error) bool { var e *tool.NameError; return errors.As(err, &e) }},
		{"description too long", "wiki", ok, strings.Repeat("d", limits.MaxToolDescriptionLen+1), approved,
			func(err error) bool { var e *field.Error; return errors.As(err, &e) && e.Field == "description" }},
		{"zero time", "wiki", ok, "", time.Time{},
			func(err error) bool { var e *field.Error; return errors.As(err, &e) && e.Field == "approvedAt" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tool.NewSnapshot(tt.server, tt.d, tt.desc, tt.at)
			if !tt.check(err) {
				t.Errorf("NewSnapshot(%q) = %v, want a %s error", tt.name, err, tt.name)
			}
		})
	}
}

func TestNewSnapshotWriteCapable(t *testing.T) {
	s, err := tool.NewSnapshot("wiki", mustDefinition(t, "create", "", `{"type":"object"}`, ""), "", approved)
	if err != nil || !s.WriteCapable() || s.Annotations() != nil {
		t.Errorf("NewSnapshot(no annotations) = %v, %v, want write-capable, nil annotations", s.WriteCapable(), err)
	}
}

func TestUnmarshalSnapshotFromDatabase(t *testing.T) {
	live := mustDefinition(t, "search", "", searchSchema, `{"readOnlyHint":true}`)
	h := tool.Hash(live)
	type row struct {
		name, desc, schema, ann string
		write                   bool
		hash                    string
		at                      time.Time
	}
	good := row{"search", "Admin", searchSchema, `{"readOnlyHint":true}`, false, h, approved}
	tests := []struct {
		name      string
		r         row
		wantField string // "" = ok, "schema" = UnsupportedError
		wantWrite bool
	}{
		{"round trip", good, "", false},
		{"stored flag wins when true", row{"search", "Admin", searchSchema, `{"readOnlyHint":true}`, true, h, approved}, "", true},
		{"annotations win when write-capable", row{"search", "Admin", searchSchema, `{"readOnlyHint":false}`, false, h, approved}, "", true},
		{"absent annotations", row{"search", "Admin", searchSchema, ``, false, h, approved}, "", true},
		{"empty name", row{"", "Admin", searchSchema, ``, false, h, approved}, "name", false},
		{"unsupported schema", row{"search", "", `{"type":"object","$ref":"#"}`, ``, false, h, approved}, "schema", false},
		{"bad annotations", row{"search", "", searchSchema, `{`, false, h, approved}, "annotations", false},
		{"uppercase hash", row{"search", "", searchSchema, ``, false, strings.ToUpper(h), approved}, "hash", false},
		{"short hash", row{"search", "", searchSchema, ``, false, h[:63], approved}, "hash", false},
		{"zero time", row{"search", "", searchSchema, ``, false, h, time.Time{}}, "approvedAt", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ann json.RawMessage
			if tt.r.ann != "" {
				ann = json.RawMessage(tt.r.ann)
			}
			s, err := tool.UnmarshalSnapshotFromDatabase(tt.r.name, tt.r.desc, json.RawMessage(tt.r.schema), ann, tt.r.write, tt.r.hash, tt.r.at)
			var fe *field.Error
			var ue *tool.UnsupportedError
			switch tt.wantField {
			case "":
				if err != nil || s.WriteCapable() != tt.wantWrite || s.Hash() != h || !s.Matches(live) {
					t.Errorf("UnmarshalSnapshotFromDatabase(%s) = %v, write %v, want nil, write %v", tt.name, err, s.WriteCapable(), tt.wantWrite)
				}
			case "schema":
				if !errors.As(err, &ue) {
					t.Errorf("UnmarshalSnapshotFromDatabase(%s) = %v, want UnsupportedError", tt.name, err)
				}
			default:
				if !errors.As(err, &fe) || fe.Field != tt.wantField {
					t.Errorf("UnmarshalSnapshotFromDatabase(%s) = %v, want field.Error %s", tt.name, err, tt.wantField)
				}
			}
		})
	}
}
