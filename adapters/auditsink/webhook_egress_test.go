package auditsink_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/codelotse/codelotse/adapters/auditsink"
	"github.com/codelotse/codelotse/adapters/mcpclient"
	"github.com/codelotse/codelotse/adapters/mcpclient/localpki"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// These tests deliver through the production poster, mcpclient's guarded
// egress, to TLS receivers on loopback. sinkHost is the receivers' name:
// the test resolver maps it to 127.0.0.1 and nothing else, so nothing
// leaves the machine.
const sinkHost = "sink.test"

var pki = sync.OnceValue(func() *localpki.PKI {
	p, err := localpki.New(sinkHost)
	if err != nil {
		panic(err)
	}
	return p
})

type loopbackResolver struct{ lookups atomic.Int64 }

func (r *loopbackResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.lookups.Add(1)
	if host == sinkHost {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// receiver is a TLS server on loopback that counts connections and keeps
// every request.
type receiver struct {
	*httptest.Server
	conns atomic.Int64
	mu    sync.Mutex
	reqs  []*http.Request
	// bodies[i] is the body of reqs[i].
	bodies [][]byte
}

func startReceiver(t *testing.T, h http.HandlerFunc) *receiver {
	t.Helper()
	rc := &receiver{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.reqs = append(rc.reqs, r.Clone(context.Background()))
		rc.bodies = append(rc.bodies, body)
		rc.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		h(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki().Leaf}}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rc.conns.Add(1)
		}
	}
	srv.StartTLS()
	rc.Server = srv
	t.Cleanup(srv.Close)
	return rc
}

func (rc *receiver) url(t *testing.T, path string) server.URL {
	t.Helper()
	_, port, _ := net.SplitHostPort(rc.Listener.Addr().String())
	return mustURL(t, fmt.Sprintf("https://%s:%s%s", sinkHost, port, path))
}

func (rc *receiver) received() ([]*http.Request, [][]byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*http.Request(nil), rc.reqs...), append([][]byte(nil), rc.bodies...)
}

func rules(t *testing.T, edition gate.Edition, privateHosts string) netpolicy.Rules {
	t.Helper()
	ph, err := netpolicy.ParsePrivateHosts(privateHosts)
	if err != nil {
		t.Fatal(err)
	}
	return netpolicy.NewRules(edition, ph)
}

// connector is the production poster, trusting the test CA, with r as
// its address rules.
func connector(r netpolicy.Rules, timeout time.Duration) (*mcpclient.Connector, *loopbackResolver) {
	res := &loopbackResolver{}
	return mcpclient.NewConnector(mcpclient.Options{
		Rules: r, Resolver: res, Timeout: timeout, RootCAs: pki().Pool, Logger: zerolog.Nop(),
	}), res
}

// listed are rules that reach sinkHost on loopback: self-hosted, with the
// host on the private-host list.
func listed(t *testing.T) netpolicy.Rules { return rules(t, gate.SelfHosted, sinkHost) }

func TestWebhookEgressDeliversVerifiableEvent(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
	}{
		{"200", http.StatusOK},
		{"204", http.StatusNoContent},
		{"202", http.StatusAccepted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var verifyErr atomic.Value
			lib, err := standardwebhooks.NewWebhook(secret)
			if err != nil {
				t.Fatal(err)
			}
			rc := startReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if err := lib.Verify(body, r.Header); err != nil {
					verifyErr.Store(err)
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				w.WriteHeader(tt.status)
			})
			c, _ := connector(listed(t), 5*time.Second)
			e := callEntry()
			wh := auditsink.NewWebhook(rc.url(t, "/hooks/audit"), mustKey(t, secret), c, time.Now)
			if err := wh.Deliver(context.Background(), e); err != nil {
				t.Fatalf("Deliver: %v (receiver: %v)", err, verifyErr.Load())
			}
			reqs, bodies := rc.received()
			if len(reqs) != 1 {
				t.Fatalf("receiver got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != http.MethodPost || r.URL.Path != "/hooks/audit" {
				t.Errorf("request %s %s, want POST /hooks/audit", r.Method, r.URL.Path)
			}
			if err := verify(t, secret, bodies[0], r.Header); err != nil {
				t.Fatalf("the library refuses what arrived: %v", err)
			}
			if got := r.Header.Get("Content-Type"); got != "application/cloudevents+json" {
				t.Errorf("Content-Type = %q", got)
			}
			for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
				if v := r.Header.Get(h); v != "" {
					t.Errorf("%s header sent: %q", h, v)
				}
			}
			checkEvent(t, decode(t, bodies[0]), e, auditsink.CallRecordType)
			checkRaw(t, bodies[0], e)
		})
	}
}

func TestWebhookEgressStatusRefused(t *testing.T) {
	for _, status := range []int{400, 401, 403, 404, 429, 500, 503} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			rc := startReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) })
			c, _ := connector(listed(t), 5*time.Second)
			wh := auditsink.NewWebhook(rc.url(t, "/hooks/audit"), mustKey(t, secret), c, time.Now)
			err := wh.Deliver(context.Background(), auditEntry())
			if err == nil || !strings.Contains(err.Error(), strconv.Itoa(status)) {
				t.Fatalf("Deliver = %v, want an error naming %d", err, status)
			}
			if strings.Contains(err.Error(), sinkHost) || strings.Contains(err.Error(), "127.0.0.1") {
				t.Errorf("error %q names the sink", err)
			}
		})
	}
}

func TestWebhookEgressRedirectNotFollowed(t *testing.T) {
	for _, status := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			// The other handler: on another receiver, and on another path
			// of the same one.
			other := startReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
			var samePathHits atomic.Int64
			var rc *receiver
			rc = startReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/elsewhere":
					samePathHits.Add(1)
					w.WriteHeader(http.StatusNoContent)
				case "/hooks/other-origin":
					w.Header().Set("Location", other.url(t, "/steal").String())
					w.WriteHeader(status)
				default:
					w.Header().Set("Location", "/elsewhere")
					w.WriteHeader(status)
				}
			})
			c, _ := connector(listed(t), 5*time.Second)
			for _, path := range []string{"/hooks/audit", "/hooks/other-origin"} {
				wh := auditsink.NewWebhook(rc.url(t, path), mustKey(t, secret), c, time.Now)
				err := wh.Deliver(context.Background(), auditEntry())
				if !errors.Is(err, ports.ErrRedirectRefused) {
					t.Fatalf("%s: Deliver = %v, want redirect_refused", path, err)
				}
				if strings.Contains(err.Error(), sinkHost) || strings.Contains(err.Error(), "elsewhere") || strings.Contains(err.Error(), "steal") {
					t.Errorf("error %q names a URL", err)
				}
			}
			if n := samePathHits.Load(); n != 0 {
				t.Errorf("the redirect's path got %d requests, want none", n)
			}
			if reqs, _ := other.received(); len(reqs) != 0 || other.conns.Load() != 0 {
				t.Errorf("the other receiver got %d requests on %d connections, want none", len(reqs), other.conns.Load())
			}
			if reqs, _ := rc.received(); len(reqs) != 2 {
				t.Errorf("the receiver got %d requests, want one per delivery", len(reqs))
			}
		})
	}
}

func TestWebhookEgressPlainHTTPCannotBeAURL(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer plain.Close()
	for _, s := range []string{
		plain.URL + "/hooks/audit",
		"http://" + sinkHost + "/hooks/audit",
		"HTTP://" + sinkHost + "/hooks/audit",
		"//" + sinkHost + "/hooks/audit",
		"ws://" + sinkHost + "/hooks/audit",
		sinkHost + "/hooks/audit",
	} {
		if u, err := server.ParseURL(s); err == nil {
			t.Errorf("ParseURL(%q) = %v, want refused: only https can be a sink", s, u)
		}
	}
}

func TestWebhookEgressHTTPSToPlainListenerFails(t *testing.T) {
	// https:// to a listener that speaks plain HTTP: the TLS handshake
	// fails and nothing is delivered in clear text.
	var hits atomic.Int64
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer plain.Close()
	_, port, _ := net.SplitHostPort(plain.Listener.Addr().String())
	c, _ := connector(listed(t), 2*time.Second)
	wh := auditsink.NewWebhook(mustURL(t, "https://"+sinkHost+":"+port+"/hooks/audit"), mustKey(t, secret), c, time.Now)
	if err := wh.Deliver(context.Background(), auditEntry()); err == nil {
		t.Fatal("Deliver = nil, want an error")
	}
	if hits.Load() != 0 {
		t.Fatalf("the plain listener served %d requests", hits.Load())
	}
}

func TestWebhookEgressUntrustedCertificate(t *testing.T) {
	rc := startReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	other, err := localpki.New(sinkHost)
	if err != nil {
		t.Fatal(err)
	}
	c := mcpclient.NewConnector(mcpclient.Options{Rules: listed(t), Resolver: &loopbackResolver{}, Timeout: 2 * time.Second, RootCAs: other.Pool, Logger: zerolog.Nop()})
	wh := auditsink.NewWebhook(rc.url(t, "/hooks/audit"), mustKey(t, secret), c, time.Now)
	if err := wh.Deliver(context.Background(), auditEntry()); err == nil {
		t.Fatal("Deliver to a certificate of another CA = nil, want an error")
	}
	if reqs, _ := rc.received(); len(reqs) != 0 {
		t.Fatalf("the receiver got %d requests over an untrusted TLS session", len(reqs))
	}
}

func TestWebhookEgressSlowSinkTimesOut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	release := make(chan struct{})
	for _, tt := range []struct {
		name string
		h    http.HandlerFunc
	}{
		{"never answers", func(_ http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}},
		{"sends headers, never the body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc := startReceiver(t, tt.h)
			c, _ := connector(listed(t), timeout)
			wh := auditsink.NewWebhook(rc.url(t, "/hooks/audit"), mustKey(t, secret), c, time.Now)
			// The caller's context allows far longer: the egress's own
			// timeout must end the delivery.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			err := wh.Deliver(ctx, auditEntry())
			took := time.Since(start)
			if !errors.Is(err, ports.ErrTimeout) {
				t.Fatalf("Deliver = %v, want timeout", err)
			}
			if took < timeout-50*time.Millisecond || took > timeout+2*time.Second {
				t.Fatalf("Deliver took %v, want about the connector's timeout %v", took, timeout)
			}
			if reqs, _ := rc.received(); len(reqs) != 1 {
				t.Fatalf("receiver got %d requests, want 1", len(reqs))
			}
		})
	}
	close(release)
}

func TestWebhookEgressLoopbackBlocked(t *testing.T) {
	for _, tt := range []struct {
		name  string
		rules func(t *testing.T) netpolicy.Rules
	}{
		{"default rules: nothing listed", func(t *testing.T) netpolicy.Rules { return rules(t, gate.SelfHosted, "") }},
		{"another host listed", func(t *testing.T) netpolicy.Rules { return rules(t, gate.SelfHosted, "wiki.corp.example") }},
		{"enterprise ignores the list", func(t *testing.T) netpolicy.Rules { return rules(t, gate.Enterprise, sinkHost) }},
		{"zero rules", func(*testing.T) netpolicy.Rules { return netpolicy.Rules{} }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc := startReceiver(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
			c, res := connector(tt.rules(t), 5*time.Second)
			for _, u := range []server.URL{rc.url(t, "/hooks/audit"), mustURL(t, "https://"+rc.Listener.Addr().String()+"/hooks/audit")} {
				wh := auditsink.NewWebhook(u, mustKey(t, secret), c, time.Now)
				err := wh.Deliver(context.Background(), auditEntry())
				if !errors.Is(err, ports.ErrAddressBlocked) {
					t.Fatalf("Deliver to %v = %v, want address_blocked", u, err)
				}
				if strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), sinkHost) {
					t.Errorf("error %q names the sink", err)
				}
			}
			if res.lookups.Load() == 0 {
				t.Error("the resolver was never asked: the refusal did not come from the address rules")
			}
			if n := rc.conns.Load(); n != 0 {
				t.Fatalf("the receiver accepted %d connections, want none", n)
			}
		})
	}
}
