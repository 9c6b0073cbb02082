package mcpclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/mcpclient/localpki"

	"github.com/rs/zerolog"

	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// testHost is the name every test server is reached by; the test
// resolver maps it to loopback and the self-hosted rules list it.
const testHost = "mcp.test"

// testPKI is a CA and a leaf for mcp.test (and 127.0.0.1), made once.
var testPKI = sync.OnceValue(func() struct {
	pool *x509.CertPool
	leaf tls.Certificate
} {
	p, err := localpki.New(testHost)
	if err != nil {
		panic(err)
	}
	return struct {
		pool *x509.CertPool
		leaf tls.Certificate
	}{p.Pool, p.Leaf}
})

// testServer is a TLS server on loopback that counts the connections it
// accepts and keeps the body of every request.
type testServer struct {
	*httptest.Server
	conns atomic.Int64
	mu    sync.Mutex
	reqs  []recordedRequest
}

type recordedRequest struct {
	Method string
	Header http.Header
	Body   []byte
}

func startServer(t testing.TB, h http.Handler) *testServer {
	t.Helper()
	ts := &testServer{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		ts.mu.Lock()
		ts.reqs = append(ts.reqs, recordedRequest{Method: r.Method, Header: r.Header.Clone(), Body: body})
		ts.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{testPKI().leaf}}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			ts.conns.Add(1)
		}
	}
	srv.Config.ErrorLog = nil
	srv.StartTLS()
	ts.Server = srv
	t.Cleanup(srv.Close)
	return ts
}

func (ts *testServer) port() int {
	_, p, _ := net.SplitHostPort(ts.Listener.Addr().String())
	n, _ := strconv.Atoi(p)
	return n
}

// url is https://mcp.test:<port>/mcp.
func (ts *testServer) url(t testing.TB) server.URL {
	t.Helper()
	return mustURL(t, fmt.Sprintf("https://%s:%d/mcp", testHost, ts.port()))
}

func (ts *testServer) requests() []recordedRequest {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]recordedRequest(nil), ts.reqs...)
}

func mustURL(t testing.TB, s string) server.URL {
	t.Helper()
	u, err := server.ParseURL(s)
	if err != nil {
		t.Fatalf("ParseURL(%q): %v", s, err)
	}
	return u
}

// resolver answers from a function, counting lookups.
type resolver struct {
	n  atomic.Int64
	fn func(n int64, host string) ([]netip.Addr, error)
}

func (r *resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return r.fn(r.n.Add(1), host)
}

// loopbackResolver maps mcp.test to 127.0.0.1 and nothing else.
func loopbackResolver() *resolver {
	return &resolver{fn: func(_ int64, host string) ([]netip.Addr, error) {
		if host == testHost {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}}
}

func fixedResolver(addrs ...string) *resolver {
	return &resolver{fn: func(int64, string) ([]netip.Addr, error) {
		out := make([]netip.Addr, len(addrs))
		for i, a := range addrs {
			out[i] = netip.MustParseAddr(a)
		}
		return out, nil
	}}
}

// rules returns the rules of an edition; listed adds mcp.test to the
// private-host list.
func rules(t testing.TB, edition gate.Edition, listed bool) netpolicy.Rules {
	t.Helper()
	list := ""
	if listed {
		list = testHost
	}
	ph, err := netpolicy.ParsePrivateHosts(list)
	if err != nil {
		t.Fatal(err)
	}
	return netpolicy.NewRules(edition, ph)
}

// selfHosted are the rules of the normal test setup: mcp.test listed.
func selfHosted(t testing.TB) netpolicy.Rules { return rules(t, gate.SelfHosted, true) }

// newTestConnector returns a connector for the test PKI and resolver. Its
// socket dial reaches loopback IPv4 only (where the test servers listen);
// any other address is recorded in the dial log and refused, so no test
// leaves the machine.
func newTestConnector(t testing.TB, r netpolicy.Rules, res ports.Resolver, timeout time.Duration) (*Connector, *dialLog) {
	t.Helper()
	c := NewConnector(Options{Rules: r, Resolver: res, Timeout: timeout, RootCAs: testPKI().pool, Logger: testLogger(t)})
	dl := &dialLog{}
	c.connect = func(ctx context.Context, d *net.Dialer, network, address string) (net.Conn, error) {
		dl.add(address)
		if netip.MustParseAddrPort(address).Addr() == netip.MustParseAddr("127.0.0.1") {
			return d.DialContext(ctx, network, address)
		}
		return nil, errNoEgress
	}
	return c, dl
}

var errNoEgress = errors.New("test: no egress beyond the test server")

type dialLog struct {
	mu    sync.Mutex
	addrs []string
}

func (d *dialLog) add(a string) {
	d.mu.Lock()
	d.addrs = append(d.addrs, a)
	d.mu.Unlock()
}

func (d *dialLog) all() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

// rpcMessage is a JSON-RPC message as the raw server reads it.
type rpcMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// rawServer is a hand-written MCP server on the 2025 handshake, for what
// a well-behaved SDK server will not do: oversized, endless and slow
// answers, server-initiated requests of any method.
type rawServer struct {
	initialize func(w http.ResponseWriter, r *http.Request, id json.RawMessage)
	toolsList  func(w http.ResponseWriter, r *http.Request, id json.RawMessage)
	toolsCall  func(w http.ResponseWriter, r *http.Request, id json.RawMessage)
	// responses receives the client's answers to server requests.
	responses chan rpcMessage
}

func newRawServer() *rawServer { return &rawServer{responses: make(chan rpcMessage, 16)} }

func (s *rawServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		return
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var m rpcMessage
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	switch {
	case m.Method == "":
		s.responses <- m
		w.WriteHeader(http.StatusAccepted)
	case m.Method == "initialize" && s.initialize != nil:
		s.initialize(w, r, m.ID)
	case m.Method == "initialize":
		writeJSON(w, m.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)
	case len(m.ID) == 0: // notifications
		w.WriteHeader(http.StatusAccepted)
	case m.Method == "tools/list" && s.toolsList != nil:
		s.toolsList(w, r, m.ID)
	case m.Method == "tools/call" && s.toolsCall != nil:
		s.toolsCall(w, r, m.ID)
	default: // server/discover included: the client falls back to initialize
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, m.ID)
	}
}

// onDiscover answers server/discover with h (when h is set) and passes
// every other request to next.
func onDiscover(next http.Handler, h func(http.ResponseWriter, *http.Request, json.RawMessage)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m rpcMessage
		if h != nil && json.Unmarshal(body, &m) == nil && m.Method == "server/discover" {
			h(w, r, m.ID)
			return
		}
		next.ServeHTTP(w, r)
	}
}

func writeJSON(w http.ResponseWriter, id json.RawMessage, result string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

// wantCode fails the test unless err is the sentinel want and its text is
// the code alone.
func wantCode(t testing.TB, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
	if err.Error() != want.Error() {
		t.Fatalf("err.Error() = %q, want the code %q alone", err.Error(), want.Error())
	}
}

// testLogger logs to the test until its cleanup runs. The go-sdk's stream
// goroutines may still log a late failure after a session is closed;
// writing that to a finished test would be a data race in package testing,
// so later lines are dropped.
func testLogger(t testing.TB) zerolog.Logger {
	w := &testLogWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.done = true
	})
	return zerolog.New(w).Level(zerolog.DebugLevel)
}

type testLogWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testLogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}
