package mcpclient

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/codelotse/codelotse/internal/npmtest"

	"go.uber.org/goleak"

	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/domain/tool/tooltest"
	"github.com/codelotse/codelotse/ports"
)

// The real peer: the TypeScript reference server
// @modelcontextprotocol/server-everything from the npm registry, pinned
// in testdata/everything (package.json and package-lock.json). The test
// installs it with `npm ci` when node_modules is missing or holds another
// version, starts it over Streamable HTTP and reaches it through a TLS
// terminator on loopback, as a self-hosted instance reaches a private MCP
// server it lists.
const (
	everythingDir = "testdata/everything"
	// everythingRepoDir is everythingDir from the repository root, for
	// messages.
	everythingRepoDir = "adapters/mcpclient/testdata/everything"
	everythingPackage = "@modelcontextprotocol/server-everything"
	// everythingVersion must equal the pin in testdata/everything/package.json.
	everythingVersion = "2026.8.31"
	// everythingMinNode is the oldest Node.js major the pinned tree runs on
	// (its dependency @hono/node-server declares node >=20).
	everythingMinNode = 20
	// everythingHost is the name the server is reached by: listed as a
	// private host, resolved to 127.0.0.1 by the test resolver.
	everythingHost = "localhost"
)

func TestEverythingServerDiscoverAllowlistAndCall(t *testing.T) {
	// Taken first, so the check (the last cleanup) sees every goroutine
	// of the proxy, the child's output copiers and the client gone.
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })

	dir, err := filepath.Abs(everythingDir)
	if err != nil {
		t.Fatal(err)
	}
	node := npmtest.RequireNode(t, everythingMinNode, "the MCP reference server "+everythingPackage+"@"+everythingVersion)
	ensureEverything(t, dir)
	sock := startEverything(t, node, dir)
	pki := localhostPKI(t)
	px := startTLSTerminator(t, sock, pki.leaf)

	const bearer = "everything-test-token-1234"
	cred, err := server.NewBearer(bearer)
	if err != nil {
		t.Fatal(err)
	}
	ph, err := netpolicy.ParsePrivateHosts(everythingHost)
	if err != nil {
		t.Fatal(err)
	}
	res := &resolver{fn: func(_ int64, host string) ([]netip.Addr, error) {
		if host == everythingHost {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}}
	c := NewConnector(Options{
		Rules:    netpolicy.NewRules(gate.SelfHosted, ph),
		Resolver: res,
		Timeout:  limits.CallTimeout,
		RootCAs:  pki.pool,
		Logger:   testLogger(t),
	})
	target := ports.MCPTarget{
		URL:        mustURL(t, fmt.Sprintf("https://%s:%d/mcp", everythingHost, px.port)),
		Credential: cred,
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := c.OpenSession(ctx, target, limits.DiscoveryResponseCap)
	if err != nil {
		t.Fatalf("OpenSession to server-everything %s: %v (server output below)", everythingVersion, err)
	}
	defer s.Close()
	era := ""
	if ir := s.cs.InitializeResult(); ir != nil {
		era = ir.ProtocolVersion
		si := ir.ServerInfo
		if si != nil {
			t.Logf("server-everything %s (serverInfo %s %s): protocol %s negotiated", everythingVersion, si.Name, si.Version, era)
		}
	}

	// Discover: every tool, assessed as the discovery endpoint does.
	listed, err := s.ListTools(ctx)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	assessed := map[string]tool.Assessment{}
	var names []string
	for _, lt := range listed {
		names = append(names, lt.Name)
		if lt.Err != nil {
			t.Logf("tool %-32s unreadable: %v", lt.Name, lt.Err)
			continue
		}
		a := tool.Assess("everything", lt.Definition)
		assessed[lt.Name] = a
		t.Logf("tool %-32s supported=%-5v writeCapable=%-5v %s", lt.Name, a.Supported, a.WriteCapable, a.Reason)
	}
	for _, want := range []string{"echo", "get-sum"} {
		if !slices.Contains(names, want) {
			t.Fatalf("ListTools = %v, want %q among them", names, want)
		}
	}
	// The server registers these only for clients that advertise roots,
	// sampling or elicitation; this client advertises nothing.
	for _, absent := range []string{"get-roots-list", "trigger-sampling-request", "trigger-elicitation-request"} {
		if slices.Contains(names, absent) {
			t.Errorf("ListTools lists %q: the server saw a client capability", absent)
		}
	}

	// Allowlist two of its tools: flat objects of scalars, read-only.
	wantProps := map[string]map[string]string{
		"echo":    {"message": "string"},
		"get-sum": {"a": "number", "b": "number"},
	}
	approved := time.Now()
	snaps := map[string]tool.Snapshot{}
	for name, props := range wantProps {
		a, ok := assessed[name]
		if !ok {
			t.Fatalf("%s: no definition", name)
		}
		if !a.Supported || a.WriteCapable {
			t.Fatalf("%s: supported=%v (%s) writeCapable=%v, want a supported read-only tool", name, a.Supported, a.Reason, a.WriteCapable)
		}
		snap, err := tool.NewSnapshot("everything", a.Definition, "Reference server tool "+name+".", approved)
		if err != nil {
			t.Fatalf("NewSnapshot(%s): %v", name, err)
		}
		if snap.Hash() != a.Hash || !snap.Matches(a.Definition) || snap.WriteCapable() {
			t.Errorf("%s: snapshot hash %s, assessed %s, matches %v, writeCapable %v", name, snap.Hash(), a.Hash, snap.Matches(a.Definition), snap.WriteCapable())
		}
		got := map[string]string{}
		for _, p := range snap.Schema().Properties() {
			got[p.Name()] = p.Type().String()
			if !p.Required() {
				t.Errorf("%s: property %s not required", name, p.Name())
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(props) {
			t.Errorf("%s: properties %v, want %v (schema %s)", name, got, props, snap.InputSchema())
		}
		snaps[name] = snap
	}

	// Call the allowlisted echo with arguments the snapshot accepts.
	args := json.RawMessage(`{"message":"hello from codelotse"}`)
	checked, err := snaps["echo"].Schema().Check(args)
	if err != nil {
		t.Fatalf("echo arguments: %v", err)
	}
	out, err := s.CallTool(ctx, "echo", checked)
	if err != nil {
		t.Fatalf("CallTool(echo): %v", err)
	}
	if out.IsError || out.Dropped != 0 || strings.Join(out.Texts, "|") != "Echo: hello from codelotse" {
		t.Errorf("CallTool(echo) = %+v, want the text %q", out, "Echo: hello from codelotse")
	}
	out, err = s.CallTool(ctx, "get-sum", tooltest.Args(`{"a":2,"b":40}`))
	if err != nil || out.IsError || strings.Join(out.Texts, "|") != "The sum of 2 and 40 is 42." {
		t.Errorf("CallTool(get-sum) = %+v, %v", out, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}

	checkEverythingWire(t, era, px.requests(), bearer)
	if n := res.n.Load(); n == 0 {
		t.Errorf("the resolver was never asked: the guarded dial was bypassed")
	}
}

// checkEverythingWire checks what reached the server: the era's
// handshake, the credential on every request, no capability.
func checkEverythingWire(t *testing.T, era string, reqs []*proxiedRequest, bearer string) {
	t.Helper()
	var seq []string
	for _, r := range reqs {
		seq = append(seq, fmt.Sprintf("%s %s %d %s", r.httpMethod, r.rpcMethod, r.status, r.protocolHeader))
		if r.authorization != "Bearer "+bearer {
			t.Errorf("%s %s: Authorization %q, want the bearer credential", r.httpMethod, r.rpcMethod, r.authorization)
		}
		if r.rpcMethod == "initialize" || r.rpcMethod == "server/discover" {
			if caps := string(r.capabilities); caps != "" && caps != "{}" {
				t.Errorf("%s advertises capabilities %s, want none", r.rpcMethod, caps)
			}
		}
	}
	t.Logf("wire: %s", strings.Join(seq, "; "))
	switch era {
	case era2026:
		// A server that speaks 2026-07-28 answers server/discover.
		if len(reqs) == 0 || reqs[0].rpcMethod != "server/discover" {
			t.Errorf("era %s without server/discover first: %v", era, seq)
		}
	case era2025, "2025-06-18", "2025-03-26":
		// The 2025 handshake: server/discover first, refused; then
		// initialize and notifications/initialized.
		i := slices.IndexFunc(reqs, func(r *proxiedRequest) bool { return r.rpcMethod == "initialize" })
		if i < 0 || i+1 >= len(reqs) || reqs[i+1].rpcMethod != "notifications/initialized" {
			t.Errorf("era %s: no initialize followed by notifications/initialized: %v", era, seq)
		}
		if i >= 0 && (i == 0 || reqs[0].rpcMethod != "server/discover" || reqs[0].status < 400) {
			t.Errorf("era %s: want a refused server/discover before initialize: %v", era, seq)
		}
		for _, r := range reqs[i+1:] {
			if r.protocolHeader != era {
				t.Errorf("%s %s after initialize: MCP-Protocol-Version %q, want %q", r.httpMethod, r.rpcMethod, r.protocolHeader, era)
			}
		}
	default:
		t.Errorf("negotiated protocol %q is not an era this client knows; wire: %v", era, seq)
	}
}

// ensureEverything runs `npm ci` in dir unless node_modules already holds
// the pinned version (npmtest.Install: serialised, never skipped).
func ensureEverything(t *testing.T, dir string) {
	t.Helper()
	if pin := pinnedEverything(t, dir); pin != everythingVersion {
		t.Fatalf("%s/package.json pins %s@%q, the test expects %q: update everythingVersion with the pin", everythingRepoDir, everythingPackage, pin, everythingVersion)
	}
	npmtest.Install(t, dir, everythingRepoDir, func() string {
		if got := installedEverything(dir); got != everythingVersion {
			return fmt.Sprintf("node_modules holds %s@%q, want %q", everythingPackage, got, everythingVersion)
		}
		return ""
	})
}

func pinnedEverything(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatalf("%s/package.json: %v", everythingRepoDir, err)
	}
	return pkg.Dependencies[everythingPackage]
}

// installedEverything is the version in node_modules, "" if absent.
func installedEverything(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", everythingPackage, "package.json"))
	if err != nil {
		return ""
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(b, &pkg) != nil {
		return ""
	}
	return pkg.Version
}

// startEverything runs `node dist/index.js streamableHttp` in its own
// process group and returns the Unix socket it listens on once it
// answers. The server reads its listen address from PORT and passes it to
// Node's listen, which takes a path as a Unix socket: nothing listens on a
// TCP port (the server would bind every interface), and the socket sits in
// a directory only this user can enter. The child gets an empty
// environment but PORT, so its get-env tool has nothing to reveal. At
// cleanup the whole group is killed and reaped.
func startEverything(t *testing.T, node, dir string) string {
	t.Helper()
	// Unix socket paths are limited to 108 bytes; t.TempDir can be longer.
	sockDir, err := os.MkdirTemp("", "cl-everything-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	sock := filepath.Join(sockDir, "mcp.sock")

	entry := filepath.Join(dir, "node_modules", everythingPackage, "dist", "index.js")
	cmd := exec.Command(node, entry, "streamableHttp")
	cmd.Dir = dir
	cmd.Env = []string{"PORT=" + sock}
	output := &cappedBuffer{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = output, output
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s %s streamableHttp: %v", node, entry, err)
	}
	pgid := cmd.Process.Pid
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			t.Errorf("server-everything (pid %d) not reaped 15 s after SIGKILL", pgid)
		}
		if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process group %d still exists after cleanup (kill 0: %v)", pgid, err)
		}
		if t.Failed() {
			t.Logf("server-everything output:\n%s", output.String())
		}
	})

	// Ready when it answers HTTP on the socket (a GET without a session
	// is a 400, which is an answer).
	hc := &http.Client{Transport: unixTransport(sock), Timeout: time.Second}
	defer hc.CloseIdleConnections()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := hc.Get("http://localhost/mcp")
		if err == nil {
			resp.Body.Close()
			return sock
		}
		select {
		case <-exited:
			t.Fatalf("server-everything exited before answering: %v\n%s", waitErr, output.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not answer on %s within 30 s: %v\n%s", sock, err, output.String())
		}
	}
}

func unixTransport(sock string) *http.Transport {
	var d net.Dialer
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", sock)
		},
		DisableCompression:    true,
		ResponseHeaderTimeout: 30 * time.Second,
	}
}

// cappedBuffer keeps the first max bytes written to it; safe for the two
// output copiers of exec.Cmd.
type cappedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *cappedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tlsTerminator is an HTTPS reverse proxy on 127.0.0.1 in front of the
// server's socket, recording each request it forwards.
type tlsTerminator struct {
	port int
	mu   sync.Mutex
	reqs []*proxiedRequest
}

type proxiedRequest struct {
	httpMethod     string
	rpcMethod      string
	capabilities   json.RawMessage
	protocolHeader string
	authorization  string
	status         int // filled in when the response headers arrive
}

type proxiedKey struct{}

func startTLSTerminator(t *testing.T, sock string, leaf tls.Certificate) *tlsTerminator {
	t.Helper()
	tt := &tlsTerminator{}
	upstream := unixTransport(sock)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&url.URL{Scheme: "http", Host: everythingHost})
		},
		Transport:     upstream,
		FlushInterval: -1, // SSE: every event at once
		ModifyResponse: func(resp *http.Response) error {
			if pr, ok := resp.Request.Context().Value(proxiedKey{}).(*proxiedRequest); ok {
				tt.mu.Lock()
				pr.status = resp.StatusCode
				tt.mu.Unlock()
			}
			return nil
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, limits.DiscoveryResponseCap))
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		pr := &proxiedRequest{
			httpMethod:     r.Method,
			protocolHeader: r.Header.Get("Mcp-Protocol-Version"),
			authorization:  r.Header.Get("Authorization"),
		}
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Capabilities json.RawMessage `json:"capabilities"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil {
			pr.rpcMethod, pr.capabilities = msg.Method, msg.Params.Capabilities
		}
		tt.mu.Lock()
		tt.reqs = append(tt.reqs, pr)
		tt.mu.Unlock()
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), proxiedKey{}, pr)))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{leaf}, MinVersion: tls.VersionTLS12}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(func() {
		srv.Close()
		upstream.CloseIdleConnections()
	})
	tt.port = srv.Listener.Addr().(*net.TCPAddr).Port
	return tt
}

func (tt *tlsTerminator) requests() []*proxiedRequest {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	out := make([]*proxiedRequest, len(tt.reqs))
	for i, r := range tt.reqs {
		c := *r
		out[i] = &c
	}
	return out
}

// localhostPKI is a throwaway CA and a leaf for "localhost".
func localhostPKI(t *testing.T) struct {
	pool *x509.CertPool
	leaf tls.Certificate
} {
	t.Helper()
	pool, leaf, err := newLocalhostPKI()
	if err != nil {
		t.Fatal(err)
	}
	return struct {
		pool *x509.CertPool
		leaf tls.Certificate
	}{pool, leaf}
}

// newLocalhostPKI is localhostPKI without a test, for the conformance
// client (conformance_test.go), which runs outside one.
func newLocalhostPKI() (*x509.CertPool, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "codelotse everything test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: everythingHost},
		DNSNames:     []string{everythingHost},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
