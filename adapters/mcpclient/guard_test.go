package mcpclient

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool/tooltest"
	"github.com/codelotse/codelotse/ports"
)

func TestBlocksPrivateAddressesUnlessTheInstanceListsTheHost(t *testing.T) {
	ts := startServer(t, newRawServer())
	// A representative set of the netpolicy table (the whole table is
	// domain/netpolicy's TestCheckTable): private ones, reachable only
	// through a listed host on a self-hosted instance, and forbidden
	// ones, never reachable.
	tests := []struct {
		addr      string
		forbidden bool
	}{
		{"10.0.0.5", false}, {"127.0.0.1", false}, {"::1", false}, {"172.16.0.1", false},
		{"192.168.1.1", false}, {"100.64.0.1", false}, {"fc00::1", false},
		{"::ffff:127.0.0.1", false}, {"64:ff9b::7f00:1", false}, {"2002:7f00:1::1", false},
		{"169.254.169.254", true}, {"fd00:ec2::254", true}, {"0.0.0.0", true}, {"::", true},
		{"224.0.0.1", true}, {"ff02::1", true}, {"fe80::1", true}, {"100.100.100.200", true},
		{"192.0.0.192", true}, {"::ffff:169.254.169.254", true}, {"64:ff9b::a9fe:a9fe", true},
	}
	for _, edition := range []gate.Edition{gate.SelfHosted, gate.Enterprise} {
		for _, listed := range []bool{false, true} {
			for _, tt := range tests {
				name := fmt.Sprintf("%s/listed=%v/%s", edition, listed, tt.addr)
				t.Run(name, func(t *testing.T) {
					allowed := !tt.forbidden && listed && edition == gate.SelfHosted
					before := ts.conns.Load()
					c, dl := newTestConnector(t, rules(t, edition, listed), fixedResolver(tt.addr), 300*time.Millisecond)
					s, err := c.OpenSession(context.Background(), ports.MCPTarget{URL: ts.url(t)}, limits.DiscoveryResponseCap)
					if s != nil {
						s.Close()
					}
					if allowed {
						if errors.Is(err, ports.ErrAddressBlocked) || len(dl.all()) == 0 {
							t.Fatalf("err = %v, dialled %v; want a dial to the listed host's address", err, dl.all())
						}
						return
					}
					wantCode(t, err, ports.ErrAddressBlocked)
					if d := dl.all(); len(d) != 0 {
						t.Errorf("dialled %v", d)
					}
					if n := ts.conns.Load() - before; n != 0 {
						t.Errorf("the server saw %d connections", n)
					}
				})
			}
		}
	}

	t.Run("a public decoy next to a private address", func(t *testing.T) {
		c, dl := newTestConnector(t, rules(t, gate.SelfHosted, false), fixedResolver("8.8.8.8", "127.0.0.1"), time.Second)
		_, err := c.OpenSession(context.Background(), ports.MCPTarget{URL: ts.url(t)}, limits.DiscoveryResponseCap)
		wantCode(t, err, ports.ErrAddressBlocked)
		if d := dl.all(); len(d) != 0 {
			t.Errorf("dialled %v", d)
		}
	})
	t.Run("an IP literal URL", func(t *testing.T) {
		c, dl := newTestConnector(t, rules(t, gate.Enterprise, true), loopbackResolver(), time.Second)
		u := mustURL(t, fmt.Sprintf("https://127.0.0.1:%d/mcp", ts.port()))
		_, err := c.OpenSession(context.Background(), ports.MCPTarget{URL: u}, limits.DiscoveryResponseCap)
		wantCode(t, err, ports.ErrAddressBlocked)
		if d := dl.all(); len(d) != 0 {
			t.Errorf("dialled %v", d)
		}
	})
	if n := ts.conns.Load(); n != 2 {
		// Only the allowed 127.0.0.1 and ::ffff:127.0.0.1 cases
		// (self-hosted, listed) connect, one keep-alive connection each.
		t.Errorf("the server saw %d connections, want 2", n)
	}
}

// TestRebindingNeverReachesThePrivateAddress: the resolver answers public
// first and private afterwards. The dial connects to the address it
// checked (never resolving again), the next connection is checked anew.
func TestRebindingNeverReachesThePrivateAddress(t *testing.T) {
	ts := startServer(t, newRawServer())
	res := &resolver{fn: func(n int64, _ string) ([]netip.Addr, error) {
		if n == 1 {
			return []netip.Addr{netip.MustParseAddr("8.8.8.8")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}}
	c, dl := newTestConnector(t, rules(t, gate.SelfHosted, false), res, time.Second)
	target := ports.MCPTarget{URL: ts.url(t)}

	// server/discover: lookup 1, public, dialled (and refused by the test
	// dial, which never leaves the machine); no initialize follows a
	// failed connection. The next session's connection: lookup 2,
	// private, refused before any dial.
	_, err := c.OpenSession(context.Background(), target, limits.DiscoveryResponseCap)
	wantCode(t, err, ports.ErrServerUnreachable)
	if d := dl.all(); len(d) != 1 || d[0] != fmt.Sprintf("8.8.8.8:%d", ts.port()) {
		t.Fatalf("dialled %v, want the checked public address only", d)
	}
	if n := res.n.Load(); n != 1 {
		t.Fatalf("%d lookups for one connection, want one", n)
	}
	_, err = c.OpenSession(context.Background(), target, limits.DiscoveryResponseCap)
	wantCode(t, err, ports.ErrAddressBlocked)
	if d := dl.all(); len(d) != 1 {
		t.Errorf("dialled %v after the rebinding", d)
	}
	if n := res.n.Load(); n != 2 {
		t.Errorf("%d lookups for two connections, want one each", n)
	}
	if n := ts.conns.Load(); n != 0 {
		t.Errorf("the server saw %d connections", n)
	}
}

// TestDialControlChecksTheConnectedAddress: whatever the dial is handed,
// the socket is checked right before it connects. Here the dial connects
// somewhere else than the checked (public) address, as a dial by name
// after a rebinding would; the Control hook refuses it.
func TestDialControlChecksTheConnectedAddress(t *testing.T) {
	ts := startServer(t, newRawServer())
	c, _ := newTestConnector(t, rules(t, gate.SelfHosted, false), fixedResolver("8.8.8.8"), time.Second)
	c.connect = func(ctx context.Context, d *net.Dialer, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, fmt.Sprintf("127.0.0.1:%d", ts.port()))
	}
	_, err := c.OpenSession(context.Background(), ports.MCPTarget{URL: ts.url(t)}, limits.DiscoveryResponseCap)
	wantCode(t, err, ports.ErrAddressBlocked)
	if n := ts.conns.Load(); n != 0 {
		t.Errorf("the server saw %d connections", n)
	}

	g := newGuard(Options{Rules: rules(t, gate.SelfHosted, true)}, ports.MCPTarget{URL: mustURL(t, "https://mcp.test/mcp")}, 1)
	for _, tt := range []struct {
		addr string
		ok   bool
	}{{"127.0.0.1:443", true}, {"8.8.8.8:443", true}, {"169.254.169.254:443", false}, {"[fd00:ec2::254]:443", false}, {"127.0.0.1:22", false}, {"nonsense", false}} {
		if err := g.control("tcp", tt.addr, nil); (err == nil) != tt.ok {
			t.Errorf("control(%q) = %v, want ok %v", tt.addr, err, tt.ok)
		}
	}
}

func TestAddsTheCredentialOnlyForTheConfiguredOriginAndRefusesRedirects(t *testing.T) {
	second := startServer(t, newRawServer())
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			first := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, fmt.Sprintf("https://%s:%d/mcp", testHost, second.port()), status)
			}))
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 2*time.Second)
			cred, _ := server.NewBearer("tok-abcdefghijkl")
			_, err := c.OpenSession(context.Background(), ports.MCPTarget{URL: first.url(t), Credential: cred}, limits.DiscoveryResponseCap)
			wantCode(t, err, ports.ErrRedirectRefused)
			reqs := first.requests()
			if len(reqs) == 0 {
				t.Fatal("the configured origin saw no request")
			}
			for _, r := range reqs {
				if r.Header.Get("Authorization") != "Bearer tok-abcdefghijkl" {
					t.Errorf("the configured origin got Authorization %q", r.Header.Get("Authorization"))
				}
			}
		})
	}
	if n := second.conns.Load(); n != 0 || len(second.requests()) != 0 {
		t.Errorf("the second origin saw %d connections and %d requests", n, len(second.requests()))
	}
}

// TestRefusesRedirectsOnTheSameOrigin: a redirect to another path of the
// configured origin is refused like any other (MC1: the configured URL is
// the only endpoint), and the target path receives no request.
func TestRefusesRedirectsOnTheSameOrigin(t *testing.T) {
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			var atTarget atomic.Int64
			mux := http.NewServeMux()
			mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/elsewhere", status)
			})
			mux.Handle("/elsewhere", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				atTarget.Add(1)
				newRawServer().ServeHTTP(w, r)
			}))
			ts := startServer(t, mux)
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 2*time.Second)
			_, err := c.OpenSession(context.Background(), ports.MCPTarget{URL: ts.url(t)}, limits.DiscoveryResponseCap)
			wantCode(t, err, ports.ErrRedirectRefused)
			if len(ts.requests()) == 0 {
				t.Fatal("the configured path saw no request")
			}
			if n := atTarget.Load(); n != 0 {
				t.Errorf("the redirect target received %d requests", n)
			}
		})
	}

	// Each of the two layers on its own: the round tripper refuses the
	// 3xx answer, and the client's redirect hook refuses to follow one.
	g := newGuard(Options{Timeout: time.Second}, ports.MCPTarget{URL: mustURL(t, "https://mcp.test/mcp")}, 1024)
	rt := chain(g, roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusTemporaryRedirect, Header: http.Header{"Location": {"/elsewhere"}}, Body: io.NopCloser(strings.NewReader(""))}, nil
	}))
	req, _ := http.NewRequest(http.MethodPost, "https://mcp.test/mcp", strings.NewReader("{}"))
	if _, err := rt.RoundTrip(req); !errors.Is(err, ports.ErrRedirectRefused) {
		t.Errorf("RoundTrip(307) = %v, want refused", err)
	}
	hc, _ := g.httpClient(nil)
	next, _ := http.NewRequest(http.MethodPost, "https://mcp.test/elsewhere", nil)
	if err := hc.CheckRedirect(next, []*http.Request{req}); !errors.Is(err, ports.ErrRedirectRefused) {
		t.Errorf("CheckRedirect = %v, want refused", err)
	}
}

// TestRefusesRequestsToAnotherOrigin: the round tripper itself, below the
// SDK: another scheme, host or port never reaches the network, and the
// credential is added only on the configured origin.
func TestRefusesRequestsToAnotherOrigin(t *testing.T) {
	cred, _ := server.NewHeader("x-api-key", "secret-value-1234")
	g := newGuard(Options{Timeout: time.Second}, ports.MCPTarget{URL: mustURL(t, "https://mcp.test:8443/mcp"), Credential: cred}, 1024)
	var seen []*http.Request
	rt := chain(g, roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, r)
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}")), Header: http.Header{}}, nil
	}))
	for _, u := range []string{"https://mcp.test:443/mcp", "http://mcp.test:8443/mcp", "https://evil.test:8443/mcp", "https://mcp.test.evil.test:8443/", "https://user@mcp.test:8443/mcp"} {
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader("{}"))
		if _, err := rt.RoundTrip(req); !errors.Is(err, ports.ErrRedirectRefused) {
			t.Errorf("RoundTrip(%s) = %v, want refused", u, err)
		}
	}
	if len(seen) != 0 {
		t.Fatalf("%d requests to another origin were sent", len(seen))
	}
	req, _ := http.NewRequest(http.MethodPost, "https://MCP.test:8443/mcp", strings.NewReader("{}"))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(seen) != 1 || seen[0].Header.Get("X-Api-Key") != "secret-value-1234" {
		t.Errorf("configured origin: sent %d, header %q", len(seen), seen[0].Header.Get("X-Api-Key"))
	}
	if req.Header.Get("X-Api-Key") != "" {
		t.Error("the caller's request was modified")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// exactList answers tools/list with a body of exactly size bytes.
func exactList(size int) func(http.ResponseWriter, *http.Request, json.RawMessage) {
	return func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		prefix := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"big","description":"`, id)
		suffix := `","inputSchema":{"type":"object"}}]}}`
		body := prefix + strings.Repeat("x", size-len(prefix)-len(suffix)) + suffix
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		io.WriteString(w, body)
	}
}

func TestCapsTheResponseSize(t *testing.T) {
	for _, limit := range []int{limits.DiscoveryResponseCap, limits.ReviewResponseCap} {
		for _, tt := range []struct {
			size int
			want error
		}{{limit, nil}, {limit + 1, ports.ErrResponseTooLarge}} {
			t.Run(fmt.Sprintf("cap %d, body %d", limit, tt.size), func(t *testing.T) {
				raw := newRawServer()
				raw.toolsList = exactList(tt.size)
				ts := startServer(t, raw)
				c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
				s := openSession(t, c, ts, server.NoCredential(), int64(limit))
				defer s.Close()
				defs, err := s.ListTools(context.Background())
				if tt.want == nil {
					if err != nil || len(defs) != 1 {
						t.Fatalf("ListTools = %d, %v", len(defs), err)
					}
					return
				}
				wantCode(t, err, tt.want)
				// The failure broke the connection; later calls keep the code.
				_, err = s.CallTool(context.Background(), "big", tooltest.Args(""))
				wantCode(t, err, tt.want)
			})
		}
	}

	for _, sse := range []bool{false, true} {
		t.Run(fmt.Sprintf("endless stream, sse=%v", sse), func(t *testing.T) {
			var written atomic.Int64
			done := make(chan struct{})
			raw := newRawServer()
			raw.toolsList = func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
				defer close(done)
				start := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"a","description":"`, id)
				if sse {
					w.Header().Set("Content-Type", "text/event-stream")
					start = "event: message\ndata: " + start
				} else {
					w.Header().Set("Content-Type", "application/json")
				}
				io.WriteString(w, start)
				chunk := []byte(strings.Repeat("x", 32<<10))
				for r.Context().Err() == nil {
					n, err := w.Write(chunk)
					written.Add(int64(n))
					if err != nil {
						return
					}
				}
			}
			ts := startServer(t, raw)
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 10*time.Second)
			s := openSession(t, c, ts, server.NoCredential(), limits.DiscoveryResponseCap)
			defer s.Close()

			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := s.ListTools(context.Background())
			wantCode(t, err, ports.ErrResponseTooLarge)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("the server is still streaming: the client did not go away")
			}
			runtime.ReadMemStats(&after)
			// Reading stops at the cap: what the client allocated stays
			// within a few times the cap, whatever the server sent.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16*limits.DiscoveryResponseCap {
				t.Errorf("allocated %d bytes while the server wrote %d", grew, written.Load())
			}
			t.Logf("server wrote %d bytes before the client went away", written.Load())
		})
	}
}

func TestAbortsSlowServers(t *testing.T) {
	const timeout = 300 * time.Millisecond
	hang := func(_ http.ResponseWriter, r *http.Request, _ json.RawMessage) { <-r.Context().Done() }
	trickle := func(sse bool) func(http.ResponseWriter, *http.Request, json.RawMessage) {
		return func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
			ct := "application/json"
			if sse {
				ct = "text/event-stream"
			}
			w.Header().Set("Content-Type", ct)
			w.WriteHeader(http.StatusOK)
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, id)
			if sse {
				msg = "event: message\ndata: " + msg + "\n\n"
			}
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for i := 0; i < len(msg); i++ {
				w.Write([]byte{msg[i]})
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
				}
			}
		}
	}
	// stall sends the headers and the start of the answer, then nothing.
	stall := func(sse bool) func(http.ResponseWriter, *http.Request, json.RawMessage) {
		return func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
			if sse {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				fmt.Fprintf(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,", id)
			} else {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,`, id)
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}
	}
	tests := []struct {
		name   string
		setup  func(*rawServer)
		during string // "open", "list" (discovery) or "call" (a review's call)
	}{
		{"initialize never answered", func(s *rawServer) { s.initialize = hang }, "open"},
		{"initialize sends headers, then stalls", func(s *rawServer) { s.initialize = stall(false) }, "open"},
		{"tools/list never answered", func(s *rawServer) { s.toolsList = hang }, "list"},
		{"tools/list trickles a byte per second", func(s *rawServer) { s.toolsList = trickle(false) }, "list"},
		{"tools/list trickles an event stream", func(s *rawServer) { s.toolsList = trickle(true) }, "list"},
		{"tools/list sends headers, then stalls", func(s *rawServer) { s.toolsList = stall(false) }, "list"},
		{"tools/list sends an event stream's headers, then stalls", func(s *rawServer) { s.toolsList = stall(true) }, "list"},
		{"tools/call never answered", func(s *rawServer) { s.toolsCall = hang }, "call"},
		{"tools/call sends headers, then stalls", func(s *rawServer) { s.toolsCall = stall(false) }, "call"},
		{"tools/call sends an event stream's headers, then stalls", func(s *rawServer) { s.toolsCall = stall(true) }, "call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := newRawServer()
			tt.setup(raw)
			ts := startServer(t, raw)
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), timeout)
			// A far deadline of the caller's, so that a missing timeout
			// fails the duration check below rather than hanging.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			start := time.Now()
			s, err := c.OpenSession(ctx, ports.MCPTarget{URL: ts.url(t)}, limits.ReviewResponseCap)
			if tt.during != "open" {
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				start = time.Now()
				if tt.during == "list" {
					_, err = s.ListTools(ctx)
				} else {
					_, err = s.CallTool(ctx, "search", tooltest.Args(`{"query":"x"}`))
				}
			}
			wantCode(t, err, ports.ErrTimeout)
			if d := time.Since(start); d > 2*timeout+time.Second {
				t.Errorf("took %v with a timeout of %v", d, timeout)
			}
		})
	}

	// The transport on its own, without the operation's deadline above
	// it: a body that stalls after the headers fails with the timeout.
	t.Run("the transport bounds a stalled body by itself", func(t *testing.T) {
		raw := newRawServer()
		raw.toolsList = stall(false)
		ts := startServer(t, raw)
		g := newGuard(Options{Rules: selfHosted(t), Resolver: loopbackResolver(), Timeout: timeout}, ports.MCPTarget{URL: ts.url(t)}, limits.ReviewResponseCap)
		hc, tr := g.httpClient(testPKI().pool)
		defer tr.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.url(t).String(), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		if !errors.Is(err, ports.ErrTimeout) {
			t.Errorf("reading the stalled body = %v, want ErrTimeout", err)
		}
		if d := time.Since(start); d > timeout+time.Second {
			t.Errorf("took %v with a timeout of %v", d, timeout)
		}
	})

	t.Run("the caller's deadline", func(t *testing.T) {
		raw := newRawServer()
		raw.toolsList = hang
		ts := startServer(t, raw)
		c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 10*time.Second)
		s := openSession(t, c, ts, server.NoCredential(), limits.DiscoveryResponseCap)
		defer s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err := s.ListTools(ctx)
		wantCode(t, err, ports.ErrTimeout)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the caller's deadline in the chain", err)
		}
	})
}

func TestReportsUnreachableServersWithoutLeakingTheURL(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	secretHost := "wiki-internal.mcp.test"
	res := &resolver{fn: func(_ int64, host string) ([]netip.Addr, error) {
		if host == secretHost {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}}
	ph := listedRules(t, secretHost)
	tlsSrv := startServer(t, newRawServer())

	tests := []struct {
		name string
		url  string
		opts func(*Options)
	}{
		{"closed port", fmt.Sprintf("https://%s:%d/mcp/secret-path", secretHost, port), nil},
		{"unknown host", fmt.Sprintf("https://nowhere.mcp.test:%d/mcp/secret-path", port), nil},
		{"untrusted certificate", fmt.Sprintf("https://%s:%d/mcp/secret-path", secretHost, tlsSrv.port()), func(o *Options) { o.RootCAs = x509.NewCertPool() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newTestConnector(t, ph, res, time.Second)
			if tt.opts != nil {
				tt.opts(&c.opts)
			}
			u := mustURL(t, tt.url)
			cred, _ := server.NewBearer("tok-abcdefghijkl")
			_, err := c.Open(context.Background(), ports.MCPTarget{URL: u, Credential: cred}, limits.DiscoveryResponseCap)
			wantCode(t, err, ports.ErrServerUnreachable)
			msg := fmt.Sprintf("%v %+v %#v", err, err, err.Error())
			for _, leak := range []string{secretHost, "mcp.test", "127.0.0.1", strconv.Itoa(port), strconv.Itoa(tlsSrv.port()), "https", "secret-path", "tok-"} {
				if strings.Contains(msg, leak) {
					t.Errorf("error %q contains %q", msg, leak)
				}
			}
		})
	}
}

// TestDefaults: nil resolver and zero timeout take the documented values.
func TestDefaults(t *testing.T) {
	c := NewConnector(Options{Logger: zerolog.Nop()})
	if c.opts.Timeout != limits.CallTimeout || c.opts.Resolver != net.DefaultResolver {
		t.Errorf("defaults = %v, %T", c.opts.Timeout, c.opts.Resolver)
	}
	if _, err := c.Open(context.Background(), ports.MCPTarget{}, 1); !errors.Is(err, errBadTarget) {
		t.Errorf("Open(zero target) = %v", err)
	}
	if _, err := c.Open(context.Background(), ports.MCPTarget{URL: mustURL(t, "https://mcp.test/")}, 0); !errors.Is(err, errBadTarget) {
		t.Errorf("Open(cap 0) = %v", err)
	}
}

func listedRules(t testing.TB, hosts string) netpolicy.Rules {
	t.Helper()
	ph, err := netpolicy.ParsePrivateHosts(hosts)
	if err != nil {
		t.Fatal(err)
	}
	return netpolicy.NewRules(gate.SelfHosted, ph)
}
