package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/domain/gate"
)

// binary is the codelotse binary built once for the end-to-end tests, with
// the same build tags as the test run.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "codelotse-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "codelotse")
	args := []string{"build", "-o", binary}
	if gate.SignedOff {
		args = append(args, "-tags", "signedoff")
	}
	if out, err := exec.Command("go", append(args, ".")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build codelotse: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"version"}, env(nil), &out, io.Discard); err != nil {
		t.Fatalf("version: %v", err)
	}
	got := out.String()
	for _, want := range []string{"codelotse ", "protocol versions: 2026-07-28, 2025-11-25", fmt.Sprintf("signed off: %t\n", gate.SignedOff)} {
		if !strings.Contains(got, want) {
			t.Errorf("version output %q lacks %q", got, want)
		}
	}
}

func TestCommandErrorsAreOneLine(t *testing.T) {
	const deadDatabase = "QUAVON_DATABASE_URL=postgres://postgres@127.0.0.1:1/x?sslmode=disable&connect_timeout=2"
	tests := []struct {
		name string
		args []string
		env  []string
		want string
	}{
		{"no command", nil, nil, "no command given"},
		{"unknown command", []string{"frobnicate"}, nil, `unknown command "frobnicate"`},
		{"unknown instance value", []string{"serve"}, []string{"QUAVON_MCP_CONTEXT=on"}, "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"unknown edition", []string{"serve"}, []string{"QUAVON_EDITION=saas"}, "QUAVON_EDITION must be self-hosted or enterprise"},
		// The instance switch takes the exact words only. migrate against a
		// dead database: were a value accepted, the error would name the
		// database instead.
		{"instance true", []string{"migrate"}, []string{"QUAVON_MCP_CONTEXT=true", deadDatabase}, "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"instance yes", []string{"migrate"}, []string{"QUAVON_MCP_CONTEXT=yes", deadDatabase}, "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"instance 1", []string{"migrate"}, []string{"QUAVON_MCP_CONTEXT=1", deadDatabase}, "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"instance Allowed", []string{"migrate"}, []string{"QUAVON_MCP_CONTEXT=Allowed", deadDatabase}, "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"instance leading space", []string{"migrate"}, []string{"QUAVON_MCP_CONTEXT= allowed", deadDatabase}, "QUAVON_MCP_CONTEXT must be allowed or disabled"},
		{"malformed key ring", []string{"migrate"}, []string{"QUAVON_ENCRYPTION_KEYS=k1:short"}, "QUAVON_ENCRYPTION_KEYS entry 1"},
		{"database down", []string{"serve"}, []string{deadDatabase}, "postgres"},
		{"stray argument", []string{"migrate", "now"}, nil, `unexpected argument "now"`},
		{"unknown flag", []string{"serve", "--port=1"}, nil, "flag provided but not defined"},
		// A command group without its verb, or with an unknown one, names
		// the group's verbs (dispatch), before any database is opened.
		{"tenants without verb", []string{"tenants"}, []string{deadDatabase}, "usage: codelotse tenants create …"},
		{"tokens unknown verb", []string{"tokens", "delete"}, []string{deadDatabase}, "usage: codelotse tokens create|list|revoke …"},
		{"keys unknown verb", []string{"keys", "create"}, []string{deadDatabase}, "usage: codelotse keys rotate …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(binary, tt.args...)
			cmd.Env = append(os.Environ(), tt.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if err == nil {
				t.Fatalf("codelotse %v succeeded, want a failure", tt.args)
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "codelotse: ") || !strings.Contains(last, tt.want) {
				t.Errorf("codelotse %v: last stderr line = %q, want one line with %q", tt.args, last, tt.want)
			}
			if strings.Contains(stderr.String(), "goroutine ") || strings.Contains(stderr.String(), "panic") {
				t.Errorf("codelotse %v printed a stack trace:\n%s", tt.args, stderr.String())
			}
		})
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	dsn := pgtest.EmptyDSN(t)
	for i, want := range []string{"applied ", "database is up to date"} {
		cmd := exec.Command(binary, "migrate")
		cmd.Env = append(os.Environ(), "QUAVON_DATABASE_URL="+dsn)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("migrate run %d: %v\n%s", i+1, err, out)
		}
		if !strings.HasPrefix(string(out), want) {
			t.Errorf("migrate run %d printed %q, want prefix %q", i+1, out, want)
		}
	}
}

// TestServeAnswersHealthAndStopsOnSIGTERM starts the real binary on a
// migrated database, checks /healthz and /readyz, and expects a clean exit
// within the 10 s shutdown bound after SIGTERM.
func TestServeAnswersHealthAndStopsOnSIGTERM(t *testing.T) {
	dsn := pgtest.DSN(t)
	cmd := exec.Command(binary, "serve")
	cmd.Env = append(os.Environ(), "QUAVON_DATABASE_URL="+dsn, "QUAVON_HTTP_ADDR=127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	lines := make(chan map[string]any, 64)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) != nil {
				line = map[string]any{"raw": sc.Text()}
			}
			lines <- line
		}
		close(lines)
	}()
	addr := ""
	deadline := time.After(20 * time.Second)
	for addr == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("serve exited before listening")
			}
			if l["message"] == "listening" {
				addr, _ = l["addr"].(string)
			}
		case <-deadline:
			t.Fatal("serve did not log its address within 20 s")
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"ok"`) {
			t.Errorf("GET %s = %d %s, want 200 ok", path, resp.StatusCode, body)
		}
	}
	// The request log names the route, never more of the request.
	sawLog := false
	for !sawLog {
		select {
		case l := <-lines:
			if l["message"] == "request" && l["route"] == "GET /healthz" && l["status"] == float64(200) && l["request_id"] != "" {
				sawLog = true
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no request log line for GET /healthz")
		}
	}

	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for range lines {
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(12 * time.Second):
		t.Fatal("serve did not stop within 10 s of SIGTERM")
	}
	t.Logf("stopped %v after SIGTERM", time.Since(start))
}

func TestReadyzFailsWhenTheDatabaseIsGone(t *testing.T) {
	// readyz is exercised through the handler with a database that is closed.
	t.Run("closed pool", func(t *testing.T) {
		cfgDSN := pgtest.DSN(t)
		ctx := context.Background()
		srv, cleanup, err := initServe(ctx, mustConfig(t, map[string]string{"QUAVON_DATABASE_URL": cfgDSN}), discardLogger())
		if err != nil {
			t.Fatal(err)
		}
		cleanup() // closes the pool
		rec := httptestRecorder()
		srv.API.Handler().ServeHTTP(rec, mustRequest(t, "GET", "/readyz"))
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("GET /readyz on a closed pool = %d, want 503", rec.Code)
		}
	})
}

// TestAPIAndWorkerScaleApart: `codelotse api` serves the API without a
// worker; `codelotse worker` serves only health, readiness and its
// metrics, no API.
func TestAPIAndWorkerScaleApart(t *testing.T) {
	dsn := pgtest.DSN(t)
	api := startCommandOn(t, "api", dsn)
	work := startCommandOn(t, "worker", dsn)
	get := func(in *instance, path string) int {
		resp, err := http.Get(in.base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range []struct {
		in   *instance
		name string
		path string
		want int
	}{
		{api, "api", "/healthz", 200}, {api, "api", "/v1/mcp/status", 401}, {api, "api", "/metrics", 200},
		{work, "worker", "/healthz", 200}, {work, "worker", "/readyz", 200}, {work, "worker", "/metrics", 200},
		{work, "worker", "/v1/mcp/status", 404},
	} {
		if got := get(tt.in, tt.path); got != tt.want {
			t.Errorf("%s GET %s = %d, want %d", tt.name, tt.path, got, tt.want)
		}
	}
	// The worker may log its start after it answers readiness: wait for it.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(work.logs.String(), "worker") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(work.logs.String(), "worker") {
		t.Errorf("the worker process logged no worker line:\n%s", work.logs.String())
	}
}
