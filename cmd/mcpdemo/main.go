// Command mcpdemo is a small MCP server for the demo (docs/walkthrough.md): a design
// wiki with one read-only tool, search, served over Streamable HTTP with
// TLS on loopback. It makes its own CA and certificate for "localhost" at
// start (package localpki) and writes the CA to the file given by -ca, so codelotse can trust
// it through SSL_CERT_FILE. It is a demo peer, not part of the service.
package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/codelotse/codelotse/adapters/mcpclient/localpki"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pages is the demo wiki.
var pages = map[string]string{
	"cache":   "ADR-7 (accepted): the session cache is bounded to 10,000 entries with LRU eviction; an unbounded map caused the 2026-03 outage.",
	"retry":   "Runbook: retries use exponential backoff with jitter, at most 5 attempts.",
	"logging": "Guideline: never log request bodies or tokens.",
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9443", "listen address")
	caFile := flag.String("ca", "mcpdemo-ca.pem", "where to write the CA certificate")
	flag.Parse()
	if err := run(*addr, *caFile); err != nil {
		fmt.Fprintln(os.Stderr, "mcpdemo:", err)
		os.Exit(1)
	}
}

func run(addr, caFile string) error {
	pki, err := localpki.New("localhost")
	if err != nil {
		return err
	}
	if err := os.WriteFile(caFile, pki.CAPEM, 0o644); err != nil {
		return err
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "demo-wiki", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        "search",
		Description: "Search the design wiki.",
		InputSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"query": map[string]any{"type": "string", "description": "search terms"}},
			"required":   []string{"query"},
		},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		var hits []string
		for key, text := range pages {
			if strings.Contains(strings.ToLower(args.Query), key) {
				hits = append(hits, text)
			}
		}
		if len(hits) == 0 {
			hits = []string{"No page matches."}
		}
		log.Printf("search called (%d bytes of arguments)", len(req.Params.Arguments))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(hits, "\n")}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := &http.Server{Addr: addr, Handler: h, TLSConfig: &tls.Config{Certificates: []tls.Certificate{pki.Leaf}}, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	log.Printf("demo MCP server on https://localhost:%s/mcp", port(addr))
	if err := srv.ListenAndServeTLS("", ""); err != http.ErrServerClosed {
		return err
	}
	return nil
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
