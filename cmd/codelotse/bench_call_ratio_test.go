package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/review"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/codelotse/codelotse/adapters/mcpclient"
	"github.com/codelotse/codelotse/adapters/mcpclient/localpki"
	"github.com/codelotse/codelotse/adapters/secrets"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
)

// BenchmarkCallVsBareSDK compares, in one run, a bare go-sdk CallTool
// with the whole guarded per-call pipeline, against the same go-sdk
// server over TLS on loopback answering the same 64 KiB text.
//
//   - bare-ns/op: mcp.ClientSession.CallTool on a session opened once,
//     through a plain http.Client that trusts the test CA.
//   - call-ns/op: one call of a real review (reviews.ReviewRunner.RunReview
//     with the real mcpclient connector: guarded transport, 256 KiB cap,
//     timeouts), as the pipeline records its duration: budget, strict
//     arguments, argument scan, tools/call, result text, 64 KiB check,
//     result scan, redaction, 8,000-character cap, untrusted wrap. The
//     run's session setup (connect, tools/list, hash check) is outside it.
//   - ratio: call-ns/op ÷ bare-ns/op;
//   - ratio-p50: the median of the iterations' own ratios, which a few
//     iterations slowed down by other work on the machine do not move.
//
// Each iteration makes one bare call and then one review, so both see the
// same load. The store and the model are the in-memory fakes of
// BenchmarkCallPipeline64KiB.
func BenchmarkCallVsBareSDK(b *testing.B) {
	scanner, err := secrets.New()
	if err != nil {
		b.Fatal(err)
	}
	pki, err := localpki.New("localhost")
	if err != nil {
		b.Fatal(err)
	}
	wiki, dense := benchCorpus(b, "wiki"), benchCorpus(b, "dense")
	for _, c := range []struct {
		name, text string
		status     review.CallStatus
	}{
		{"wiki", wiki, review.CallOK},
		// Keyword-dense text without the lines the scanner flags: it goes
		// the whole way (see BenchmarkCallPipeline64KiB).
		{"dense-clean", withoutFindings(scanner, dense), review.CallOK},
		// dense.txt as is: dropped after the result scan.
		{"dense", dense, review.CallBlocked},
	} {
		b.Run(c.name, func(b *testing.B) {
			url := startBenchMCP(b, pki, c.text)
			bare := bareSession(b, pki, url)
			conn := mcpclient.NewConnector(mcpclient.Options{
				Rules:    localhostRules(b),
				Resolver: loopbackOnly{},
				RootCAs:  pki.Pool,
				Logger:   zerolog.Nop(),
			})
			e := newBenchEnvAt(b, scanner, url, listedSearch(b, conn, url), conn, true)
			e.model.calls = 1
			runner := reviews.NewReviewRunner(e.deps)
			ctx := context.Background()
			params := &mcp.CallToolParams{Name: "search", Arguments: json.RawMessage(benchArgs)}

			// One checked round of each.
			res, err := bare.CallTool(ctx, params)
			if err != nil || len(res.Content) != 1 {
				b.Fatalf("bare CallTool = %v, %v", res, err)
			}
			if err := runner.RunReview(ctx, benchTenant, benchReview); err != nil {
				b.Fatal(err)
			}
			if e.calls.n != 1 || e.calls.last.Status != c.status {
				b.Fatalf("calls recorded = %d (last %+v), want 1 with status %q", e.calls.n, e.calls.last, c.status)
			}
			if c.status == review.CallOK && !strings.Contains(e.model.lastAnswer, "<untrusted") {
				b.Fatalf("the model did not get a wrapped answer: %.200q", e.model.lastAnswer)
			}
			e.calls.n, e.calls.total = 0, 0

			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			var bareTotal, callTotal time.Duration
			var ratios []float64
			for b.Loop() {
				t0 := time.Now()
				if _, err := bare.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
				bareNs := time.Since(t0)
				if err := runner.RunReview(ctx, benchTenant, benchReview); err != nil {
					b.Fatal(err)
				}
				callNs := e.calls.last.Duration
				bareTotal += bareNs
				callTotal += callNs
				ratios = append(ratios, float64(callNs)/float64(bareNs))
			}
			if e.calls.n != b.N {
				b.Fatalf("calls recorded = %d, want %d", e.calls.n, b.N)
			}
			b.ReportMetric(float64(bareTotal.Nanoseconds())/float64(b.N), "bare-ns/op")
			b.ReportMetric(float64(callTotal.Nanoseconds())/float64(b.N), "call-ns/op")
			b.ReportMetric(float64(callTotal)/float64(bareTotal), "ratio")
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "ratio-p50")
		})
	}
}

// startBenchMCP serves a go-sdk server (protocol 2026-07-28, stateless)
// over TLS on loopback whose search tool answers text; it returns
// https://localhost:<port>/mcp.
func startBenchMCP(b *testing.B, pki *localpki.PKI, text string) string {
	b.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        "search",
		Description: benchDescription,
		InputSchema: json.RawMessage(benchSchema),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		DisableLocalhostProtection: true,
	})
	srv := httptest.NewUnstartedServer(h)
	// A session's close resets its connections; that is not news.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.Leaf}}
	srv.StartTLS()
	b.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "https://localhost:" + port + "/mcp"
}

// listedSearch is the search tool as the server lists it, as discovery
// would have stored it.
func listedSearch(b *testing.B, conn *mcpclient.Connector, url string) tool.Definition {
	b.Helper()
	u, err := server.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	s, err := conn.OpenSession(context.Background(), ports.MCPTarget{URL: u, Credential: server.NoCredential()}, limits.DiscoveryResponseCap)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	tools, err := s.ListAll(context.Background())
	if err != nil || len(tools) != 1 || tools[0].Err != nil {
		b.Fatalf("tools/list = %+v, %v", tools, err)
	}
	return tools[0].Definition
}

// bareSession is a go-sdk client session to url through a plain
// http.Client: no guard, no cap, no timeout.
func bareSession(b *testing.B, pki *localpki.PKI, url string) *mcp.ClientSession {
	b.Helper()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.Pool}}}
	client := mcp.NewClient(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// localhostRules are the self-hosted rules with localhost on the
// private-host list, as an instance serving loopback servers sets them.
func localhostRules(b *testing.B) netpolicy.Rules {
	b.Helper()
	ph, err := netpolicy.ParsePrivateHosts("localhost")
	if err != nil {
		b.Fatal(err)
	}
	return netpolicy.NewRules(gate.SelfHosted, ph)
}

// loopbackOnly resolves localhost to 127.0.0.1 and nothing else, so the
// benchmark never depends on the machine's resolver.
type loopbackOnly struct{}

func (loopbackOnly) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "localhost" {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}
