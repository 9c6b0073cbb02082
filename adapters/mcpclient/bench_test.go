package mcpclient

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// The guarded fetch against a plain http.Client, on loopback TLS with the
// same server and body: the difference is what the guard adds per
// request (origin check, credential header, per-request deadline, capped
// body) and, without keep-alive, per connection (lookup, address checks,
// Control hook).
const benchBody = `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`

func benchServer(b *testing.B) *testServer {
	return startServer(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, benchBody)
	}))
}

func runRoundTrips(b *testing.B, hc *http.Client, url string) {
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

func guardedClient(b *testing.B, ts *testServer, keepAlive bool) *http.Client {
	g := newGuard(Options{Rules: selfHosted(b), Resolver: loopbackResolver(), Timeout: 10 * time.Second}, ports.MCPTarget{URL: ts.url(b)}, limits.DiscoveryResponseCap)
	hc, tr := g.httpClient(testPKI().pool)
	tr.DisableKeepAlives = !keepAlive
	b.Cleanup(tr.CloseIdleConnections)
	return hc
}

// BenchmarkGuardedRoundTripWithCredential: the same with a static bearer
// credential, whose header goes on a copy of each request.
func BenchmarkGuardedRoundTripWithCredential(b *testing.B) {
	ts := benchServer(b)
	cred, err := server.NewBearer("tok-bench-abcdefghijkl")
	if err != nil {
		b.Fatal(err)
	}
	g := newGuard(Options{Rules: selfHosted(b), Resolver: loopbackResolver(), Timeout: 10 * time.Second}, ports.MCPTarget{URL: ts.url(b), Credential: cred}, limits.DiscoveryResponseCap)
	hc, tr := g.httpClient(testPKI().pool)
	b.Cleanup(tr.CloseIdleConnections)
	runRoundTrips(b, hc, ts.url(b).String())
}

func plainClient(b *testing.B, keepAlive bool) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: testPKI().pool}, DisableKeepAlives: !keepAlive}
	b.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func BenchmarkGuardedRoundTrip(b *testing.B) {
	ts := benchServer(b)
	runRoundTrips(b, guardedClient(b, ts, true), ts.url(b).String())
}

func BenchmarkPlainRoundTrip(b *testing.B) {
	ts := benchServer(b)
	runRoundTrips(b, plainClient(b, true), fmt.Sprintf("https://127.0.0.1:%d/mcp", ts.port()))
}

func BenchmarkGuardedRoundTripNewConnection(b *testing.B) {
	ts := benchServer(b)
	runRoundTrips(b, guardedClient(b, ts, false), ts.url(b).String())
}

func BenchmarkPlainRoundTripNewConnection(b *testing.B) {
	ts := benchServer(b)
	runRoundTrips(b, plainClient(b, false), fmt.Sprintf("https://127.0.0.1:%d/mcp", ts.port()))
}
