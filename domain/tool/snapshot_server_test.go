package tool_test

import (
	"testing"

	"github.com/codelotse/codelotse/domain/tool"
)

// The server's definition as approved: kept by NewSnapshot, restored by
// a storage adapter only when the pinned hash covers it.
func TestSnapshotServerDefinition(t *testing.T) {
	live := mustDefinition(t, "search", "Server text\u202e.", searchSchema, `{"readOnlyHint":true,"title":"Search"}`)
	s, err := tool.NewSnapshot("wiki", live, "Admin text", approved)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := s.ServerDefinition()
	if !ok || d.Description() != "Server text\u202e." || string(d.InputSchema()) != string(live.InputSchema()) ||
		string(d.Annotations()) != string(live.Annotations()) || tool.Hash(d) != s.Hash() {
		t.Errorf("ServerDefinition() = %q %s %s, %v; want the live definition as the server sent it", d.Description(), d.InputSchema(), d.Annotations(), ok)
	}
	if s.Description() != "Admin text" {
		t.Errorf("Description() = %q, want the admin's text, kept apart", s.Description())
	}

	stored, err := tool.UnmarshalSnapshotFromDatabase(s.Name(), s.Description(), s.InputSchema(), s.Annotations(), s.WriteCapable(), s.Hash(), s.ApprovedAt())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := stored.ServerDefinition(); ok {
		t.Error("a row without the server's description has a server definition")
	}
	if _, ok := stored.WithServerDescription("Server text, tampered.").ServerDefinition(); ok {
		t.Error("a server description the pinned hash does not cover was restored")
	}
	if _, ok := stored.WithServerDescription("Admin text").ServerDefinition(); ok {
		t.Error("the admin's description was taken for the server's")
	}
	restored := stored.WithServerDescription("Server text\u202e.")
	if d, ok := restored.ServerDefinition(); !ok || d.Description() != "Server text\u202e." || tool.Hash(d) != s.Hash() {
		t.Errorf("restored ServerDefinition() = %q, %v; want the server's text", d.Description(), ok)
	}
	if _, ok := (tool.Snapshot{}).ServerDefinition(); ok {
		t.Error("the zero snapshot has a server definition")
	}

	// No annotations: restored all the same (the hash stands "{}" in).
	bare := mustDefinition(t, "create", "Creates.", `{"type":"object"}`, "")
	b, err := tool.NewSnapshot("wiki", bare, "Create", approved)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := tool.UnmarshalSnapshotFromDatabase(b.Name(), b.Description(), b.InputSchema(), b.Annotations(), b.WriteCapable(), b.Hash(), b.ApprovedAt())
	if d, ok := b2.WithServerDescription("Creates.").ServerDefinition(); !ok || d.Annotations() != nil {
		t.Errorf("restored without annotations = %s, %v", d.Annotations(), ok)
	}
}
