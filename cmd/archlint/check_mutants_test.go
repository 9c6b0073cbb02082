package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckReportsAStdioImport: importing a go-sdk package whose path
// names stdio is reported, whatever the file then uses of it (the bad
// fixture covers the identifiers only).
func TestCheckReportsAStdioImport(t *testing.T) {
	files := map[string]string{
		"go.mod":                  "module example.com/stdio\n\ngo 1.26\n",
		"adapters/mcp/client.go":  "package mcp\n\nimport _ \"github.com/modelcontextprotocol/go-sdk/internal/Stdio\"\n",
		"adapters/mcp/allowed.go": "package mcp\n\nimport _ \"github.com/modelcontextprotocol/go-sdk/mcp\"\n",
	}
	root := writeTree(t, files)
	got, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !strings.HasPrefix(got[0].String(), "adapters/mcp/client.go:3: imports github.com/modelcontextprotocol/go-sdk/internal/Stdio: stdio transports are banned (MC11)") {
		t.Errorf("Check = %v, want the stdio import of client.go only", got)
	}
}

// writeTree writes files (slash-separated paths to contents) under a new
// temporary directory and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
