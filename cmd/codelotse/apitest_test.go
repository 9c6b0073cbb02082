package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/jackc/pgx/v5"
)

// Black-box harness: the real binary on a fresh database, driven over HTTP
// and the CLI as a user would, every response validated against
// openapi.yaml so the document cannot drift from the implementation.

var (
	specOnce   sync.Once
	specRouter routers.Router
	specErr    error
)

func openapiRouter(t *testing.T) routers.Router {
	t.Helper()
	specOnce.Do(func() {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromFile("../../openapi.yaml")
		if err != nil {
			specErr = err
			return
		}
		if err = doc.Validate(loader.Context); err != nil {
			specErr = err
			return
		}
		doc.Servers = nil // match any host: the test server listens on a random port
		specRouter, specErr = legacy.NewRouter(doc)
	})
	if specErr != nil {
		t.Fatalf("openapi.yaml: %v", specErr)
	}
	return specRouter
}

// instance is one running `codelotse serve`.
type instance struct {
	t    *testing.T
	base string
	dsn  string
	env  []string
	logs *syncBuffer
	// secrets are strings (tokens, credentials) that must never appear in
	// the instance's logs; see checkLogsHoldNoSecrets.
	secrets *secretSet
}

type secretSet struct {
	mu   sync.Mutex
	list []string
}

func (s *secretSet) add(v ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, v...)
}

func (s *secretSet) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.list...)
}

// on returns a view of the instance that reports failures to t (a
// subtest); the process, logs and secrets are shared.
func (in *instance) on(t *testing.T) *instance {
	c := *in
	c.t = t
	return &c
}

// secret records values that must never appear in the logs.
func (in *instance) secret(v ...string) { in.secrets.add(v...) }

// checkLogsHoldNoSecrets fails t if any recorded secret appears in the
// instance's logs. Register it with t.Cleanup after startInstance, so it
// runs once every (parallel) subtest is done and before the instance stops.
func (in *instance) checkLogsHoldNoSecrets(t *testing.T) {
	t.Helper()
	logs := in.logs.String()
	for _, s := range in.secrets.all() {
		if s != "" && strings.Contains(logs, s) {
			t.Errorf("the instance logs contain the secret %q", s)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startInstance starts the binary on a fresh migrated database with the
// given extra environment and waits until it listens.
func startInstance(t *testing.T, extraEnv ...string) *instance {
	t.Helper()
	return startInstanceOn(t, pgtest.DSN(t), extraEnv...)
}

// startInstanceOn starts the binary on an existing migrated database, so
// two instances with different environments can share one database.
func startInstanceOn(t *testing.T, dsn string, extraEnv ...string) *instance {
	t.Helper()
	return startCommandOn(t, "serve", dsn, extraEnv...)
}

// startCommandOn starts `codelotse <command>` (serve, api or worker) on
// the database dsn and waits until it listens.
func startCommandOn(t *testing.T, command, dsn string, extraEnv ...string) *instance {
	t.Helper()
	// No recheck between reviews unless a test asks for one: its listing
	// takes the discovery claim that the tests' own discoveries need.
	env := append(os.Environ(), "QUAVON_DATABASE_URL="+dsn, "QUAVON_HTTP_ADDR=127.0.0.1:0", "QUAVON_LOG_LEVEL=debug", "QUAVON_MCP_RECHECK_INTERVAL=0")
	env = append(env, extraEnv...)
	cmd := exec.Command(binary, command)
	cmd.Env = env
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &instance{t: t, dsn: dsn, env: env, logs: &syncBuffer{}, secrets: &secretSet{}}
	addrc := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			in.logs.Write(append(append([]byte{}, line...), '\n'))
			var m map[string]any
			if json.Unmarshal(line, &m) == nil && m["message"] == "listening" {
				select {
				case addrc <- m["addr"].(string):
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		waited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-waited
		}
		<-done
	})
	select {
	case addr := <-addrc:
		in.base = "http://" + addr
	case <-done:
		t.Fatalf("serve exited before listening:\n%s", in.logs.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not listen within 20 s:\n%s", in.logs.String())
	}
	return in
}

// cli runs a codelotse command with the instance's environment and
// returns its trimmed stdout; it fails the test on a non-zero exit.
func (in *instance) cli(args ...string) string {
	in.t.Helper()
	out, stderr, err := in.tryCLI(args...)
	if err != nil {
		in.t.Fatalf("codelotse %s: %v: %s", strings.Join(args, " "), err, stderr)
	}
	return out
}

func (in *instance) tryCLI(args ...string) (stdout, stderr string, err error) {
	return in.tryCLIEnv(nil, args...)
}

// tryCLIEnv runs a codelotse command with the instance's environment plus
// extraEnv (a later entry wins over an earlier one for the same variable).
func (in *instance) tryCLIEnv(extraEnv []string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(append([]string{}, in.env...), extraEnv...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return strings.TrimSpace(o.String()), strings.TrimSpace(e.String()), err
}

// tenant creates a tenant and a token with the permissions; it returns
// the tenant id and a client using the token.
func (in *instance) tenant(name, permissions string) (string, *client) {
	in.t.Helper()
	id := in.cli("tenants", "create", "--name", name)
	return id, in.token(id, permissions)
}

// token creates another token of the tenant and returns a client using it.
func (in *instance) token(tenantID, permissions string) *client {
	in.t.Helper()
	token := in.cli("tokens", "create", "--tenant", tenantID, "--permissions", permissions)
	in.secret(token)
	return &client{in: in, token: token}
}

// db opens a connection to the instance's database as the admin role (a
// superuser in the tests, so row-level security does not apply; the
// instance itself connects as the database's non-superuser owner), for
// raw checks of what is stored. It is closed when the test ends.
func (in *instance) db() *pgx.Conn {
	in.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgtest.SuperuserDSN(in.dsn))
	if err != nil {
		in.t.Fatalf("connect to the instance's database: %v", err)
	}
	in.t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// on returns a client that reports failures to t (a subtest).
func (c *client) on(t *testing.T) *client { return &client{in: c.in.on(t), token: c.token} }

// client calls the API with one token.
type client struct {
	in    *instance
	token string
}

// response is what a call returned, decoded.
type response struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
}

// code is the error code of an error response ("" for none).
func (r response) code() string {
	if e, ok := r.Body["error"].(map[string]any); ok {
		s, _ := e["code"].(string)
		return s
	}
	return ""
}

// do sends a request (body: nil, a string sent verbatim, or a value sent
// as JSON) and validates the response against openapi.yaml.
func (c *client) do(method, path string, body any) response {
	t := c.in.t
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.in.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &r.Body); err != nil {
			t.Errorf("%s %s: response is not a JSON object: %v: %q", method, path, err, raw)
		}
	}
	validateAgainstSpec(t, req, r)
	return r
}

func validateAgainstSpec(t *testing.T, req *http.Request, r response) {
	t.Helper()
	route, params, err := openapiRouter(t).FindRoute(req)
	if err != nil {
		if r.Status == http.StatusNotFound || r.Status == http.StatusMethodNotAllowed {
			return // an unknown path or method is not a documented route
		}
		t.Errorf("%s %s answered %d but is not in openapi.yaml: %v", req.Method, req.URL.Path, r.Status, err)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 r.Status,
		Header:                 r.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(r.Raw)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s → %d does not match openapi.yaml: %v\nbody: %s", req.Method, req.URL.Path, r.Status, err, r.Raw)
	}
}
