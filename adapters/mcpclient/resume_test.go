package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool/tooltest"
	"github.com/codelotse/codelotse/ports"
)

// resumingServer is a hand-written 2025-era server whose tools/call
// answer comes as an event stream that the server closes before the
// result (the conformance scenario sse-retry): each stream sends a
// priming event (an id, retry, no data) and ends; the client resumes
// with a GET carrying Last-Event-ID; the stream numbered closes (from 0)
// carries the result.
type resumingServer struct {
	closes  int           // streams closed before the result
	pad     int           // bytes of SSE comment each stream sends first
	hold    time.Duration // how long each stream waits before it ends
	raw     *rawServer
	mu      sync.Mutex
	callID  json.RawMessage
	resumes []http.Header // headers of the resumption GETs
	paths   []string
}

func (s *resumingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		s.mu.Lock()
		s.resumes = append(s.resumes, r.Header.Clone())
		s.paths = append(s.paths, r.URL.Path)
		n, id := len(s.resumes), s.callID
		s.mu.Unlock()
		s.stream(w, r, n, id)
	default:
		s.raw.ServeHTTP(w, r)
	}
}

// stream is the n-th stream of the call (0: the POST's own).
func (s *resumingServer) stream(w http.ResponseWriter, r *http.Request, n int, id json.RawMessage) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if s.pad > 0 {
		fmt.Fprintf(w, ": %s\n\n", strings.Repeat("p", s.pad))
	}
	w.(http.Flusher).Flush()
	select {
	case <-r.Context().Done():
		return
	case <-time.After(s.hold):
	}
	if n < s.closes {
		fmt.Fprintf(w, "id: e%d\nretry: 10\ndata: \n\n", n+1)
		return // the stream ends before the result
	}
	fmt.Fprintf(w, "id: e%d\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed %d\"}]}}\n\n", n+1, id, n)
}

func newResumingServer(closes, pad int, hold time.Duration) *resumingServer {
	s := &resumingServer{closes: closes, pad: pad, hold: hold, raw: newRawServer()}
	s.raw.toolsCall = func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		s.mu.Lock()
		s.callID = id
		s.mu.Unlock()
		s.stream(w, r, 0, id)
	}
	return s
}

func (s *resumingServer) resumptions() ([]http.Header, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.resumes...), append([]string(nil), s.paths...)
}

// TestResumesClosedStreamsWithinTheCallsBounds: a response stream closed
// before the result is resumed with Last-Event-ID on the configured
// endpoint, at most twice per call, under the call's deadline and with
// its byte cap counted across the streams.
func TestResumesClosedStreamsWithinTheCallsBounds(t *testing.T) {
	const timeout = 2 * time.Second
	third := limits.ReviewResponseCap * 4 / 10 // three streams of this exceed the cap, two do not
	tests := []struct {
		name    string
		srv     *resumingServer
		want    error
		text    string
		resumes int
	}{
		{"resumed once", newResumingServer(1, 0, 0), nil, "resumed 1", 1},
		{"resumed twice", newResumingServer(2, 0, 0), nil, "resumed 2", 2},
		{"a third resumption is refused", newResumingServer(3, 0, 0), ports.ErrProtocol, "", 2},
		{"two streams within the cap", newResumingServer(1, third, 0), nil, "resumed 1", 1},
		{"the cap counts across the streams", newResumingServer(2, third, 0), ports.ErrResponseTooLarge, "", 2},
		// Each stream is well within the request timeout, the call is not.
		{"the call's deadline covers the resumptions", newResumingServer(2, 0, timeout*6/10), ports.ErrTimeout, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, tt.srv)
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), timeout)
			cred, _ := server.NewBearer("tok-resume-abcdef")
			s := openSession(t, c, ts, cred, limits.ReviewResponseCap)
			defer s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := s.CallTool(ctx, "search", tooltest.Args(`{"query":"x"}`))
			if tt.want == nil {
				if err != nil || len(res.Texts) != 1 || res.Texts[0] != tt.text {
					t.Fatalf("CallTool = %+v, %v; want %q", res, err, tt.text)
				}
			} else {
				wantCode(t, err, tt.want)
			}
			resumes, paths := tt.srv.resumptions()
			if len(resumes) != tt.resumes {
				t.Errorf("the server saw %d resumptions, want %d", len(resumes), tt.resumes)
			}
			for i, h := range resumes {
				if got, want := h.Get("Last-Event-ID"), fmt.Sprintf("e%d", i+1); got != want {
					t.Errorf("resumption %d: Last-Event-ID %q, want %q", i+1, got, want)
				}
				if h.Get("Authorization") != "Bearer tok-resume-abcdef" || paths[i] != "/mcp" {
					t.Errorf("resumption %d: path %s, Authorization %q; want the configured endpoint and credential", i+1, paths[i], h.Get("Authorization"))
				}
			}
		})
	}
}

// TestResumesAGoSDKServersClosedStream: the conformance scenario
// sse-retry against a real peer: a go-sdk 2025-11-25 server with an event
// store closes the tool's stream (CloseSSEStream) before the result; the
// client resumes once and gets the result the store replays.
func TestResumesAGoSDKServersClosedStream(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "sse-retry", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{era2025}})
	s.AddTool(&mcp.Tool{Name: "test_reconnection", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(100 * time.Millisecond): // the client is away meanwhile
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "after the reconnection"}}}, nil
		})
	ts := startServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		EventStore:                 mcp.NewMemoryEventStore(nil),
		DisableLocalhostProtection: true,
	}))
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
	sess := openSession(t, c, ts, server.NoCredential(), limits.ReviewResponseCap)
	defer sess.Close()
	res, err := sess.CallTool(context.Background(), "test_reconnection", tooltest.Args(""))
	if err != nil || len(res.Texts) != 1 || res.Texts[0] != "after the reconnection" {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
	var resumes []string
	for _, r := range ts.requests() {
		if r.Method == http.MethodGet {
			resumes = append(resumes, r.Header.Get("Last-Event-ID"))
		}
	}
	if len(resumes) != 1 || resumes[0] == "" {
		t.Errorf("resumptions with Last-Event-ID %q, want one with an id", resumes)
	}
}
