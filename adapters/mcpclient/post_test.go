package mcpclient

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/ports"
)

// The tests of Connector.Post, the guarded POST of the audit stream's
// webhook.

func TestPostReturnsStatus(t *testing.T) {
	// Every status that is not a redirect is handed back as it came, with
	// no error: the caller judges it.
	for _, status := range []int{200, 201, 202, 204, 299, 400, 401, 403, 404, 413, 429, 500, 502, 503} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(status)
				_, _ = w.Write([]byte(`{"error":"whatever"}`))
			}))
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
			got, err := c.Post(context.Background(), ts.url(t), map[string]string{"Content-Type": "application/json"}, []byte(`{}`))
			if err != nil || got != status {
				t.Fatalf("Post = %d, %v; want %d, nil", got, err, status)
			}
			if n := len(ts.requests()); n != 1 {
				t.Fatalf("server got %d requests, want 1 (no retry)", n)
			}
		})
	}
}

func TestPostRedirectRefusedNotFollowed(t *testing.T) {
	for _, status := range []int{300, 301, 302, 303, 304, 307, 308} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			other := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
			var elsewhere atomic.Int64
			ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/elsewhere":
					elsewhere.Add(1)
					w.WriteHeader(http.StatusNoContent)
				case "/cross":
					w.Header().Set("Location", other.url(t).String())
					w.WriteHeader(status)
				default:
					w.Header().Set("Location", "/elsewhere")
					w.WriteHeader(status)
				}
			}))
			c, dl := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
			for _, path := range []string{"/mcp", "/cross"} {
				u := mustURL(t, "https://"+testHost+":"+strconv.Itoa(ts.port())+path)
				got, err := c.Post(context.Background(), u, map[string]string{"Content-Type": "application/json"}, []byte(`{"a":1}`))
				wantCode(t, err, ports.ErrRedirectRefused)
				if got != 0 {
					t.Errorf("%s: status = %d alongside the refusal, want 0", path, got)
				}
			}
			if elsewhere.Load() != 0 {
				t.Error("the same-origin redirect was followed")
			}
			if len(other.requests()) != 0 || other.conns.Load() != 0 {
				t.Error("the cross-origin redirect reached the other server")
			}
			want := "127.0.0.1:" + strconv.Itoa(ts.port())
			for _, a := range dl.all() {
				if a != want {
					t.Errorf("dialled %s, want only %s", a, want)
				}
			}
		})
	}
}

func TestPostBlockedBeforeConnecting(t *testing.T) {
	for _, tt := range []struct {
		name string
		mk   func(t *testing.T) (*Connector, *dialLog)
	}{
		{"loopback, host not listed", func(t *testing.T) (*Connector, *dialLog) {
			return newTestConnector(t, rules(t, gate.SelfHosted, false), loopbackResolver(), 5*time.Second)
		}},
		{"loopback, enterprise ignores the list", func(t *testing.T) (*Connector, *dialLog) {
			return newTestConnector(t, rules(t, gate.Enterprise, true), loopbackResolver(), 5*time.Second)
		}},
		{"cloud metadata, listed", func(t *testing.T) (*Connector, *dialLog) {
			return newTestConnector(t, selfHosted(t), fixedResolver("169.254.169.254"), 5*time.Second)
		}},
		{"public decoy with a private address", func(t *testing.T) (*Connector, *dialLog) {
			return newTestConnector(t, rules(t, gate.SelfHosted, false), fixedResolver("93.184.216.34", "127.0.0.1"), 5*time.Second)
		}},
		{"unspecified address, listed", func(t *testing.T) (*Connector, *dialLog) {
			return newTestConnector(t, selfHosted(t), fixedResolver("0.0.0.0"), 5*time.Second)
		}},
		{"no address", func(t *testing.T) (*Connector, *dialLog) {
			return newTestConnector(t, selfHosted(t), fixedResolver(), 5*time.Second)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
			c, dl := tt.mk(t)
			got, err := c.Post(context.Background(), ts.url(t), map[string]string{"Content-Type": "application/json"}, []byte(`{}`))
			wantCode(t, err, ports.ErrAddressBlocked)
			if got != 0 {
				t.Errorf("status = %d, want 0", got)
			}
			if a := dl.all(); len(a) != 0 {
				t.Fatalf("dialled %v before refusing", a)
			}
			if ts.conns.Load() != 0 {
				t.Fatalf("the server accepted %d connections", ts.conns.Load())
			}
		})
	}
}

func TestPostResponseBodyCapped(t *testing.T) {
	for _, tt := range []struct {
		name    string
		n       int // body bytes; -1 streams without end
		wantErr error
	}{
		{"empty", 0, nil},
		{"exactly the cap", MaxOAuthResponseBytes, nil},
		{"one byte over the cap", MaxOAuthResponseBytes + 1, ports.ErrResponseTooLarge},
		{"ten times the cap", 10 * MaxOAuthResponseBytes, ports.ErrResponseTooLarge},
		{"endless", -1, ports.ErrResponseTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusOK)
				if tt.n >= 0 {
					_, _ = w.Write(bytes.Repeat([]byte("x"), tt.n))
					return
				}
				chunk := bytes.Repeat([]byte("y"), 4096)
				for r.Context().Err() == nil {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			}))
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
			start := time.Now()
			got, err := c.Post(context.Background(), ts.url(t), map[string]string{"Content-Type": "application/json"}, []byte(`{}`))
			if tt.wantErr == nil {
				if err != nil || got != http.StatusOK {
					t.Fatalf("Post = %d, %v; want 200, nil", got, err)
				}
				return
			}
			// An answer over the cap is a failure, even with a 2xx status:
			// its status is not returned.
			wantCode(t, err, tt.wantErr)
			if got != 0 {
				t.Errorf("status = %d alongside the failure, want 0", got)
			}
			if el := time.Since(start); el > 3*time.Second {
				t.Errorf("took %v: the transfer was not cut at the cap", el)
			}
		})
	}
}

func TestPostSendsExactlyTheGivenHeadersAndBody(t *testing.T) {
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
	header := map[string]string{
		"Content-Type":      "application/cloudevents+json",
		"webhook-id":        "0190f1d2-7c3a-7b7e-9a51-3f5d7c1e2a10",
		"webhook-timestamp": "1764659027",
		"webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
	}
	body := []byte("{\"specversion\":\"1.0\",\"data\":{\"k\":\"\u00e9\\n\"}}\n\x00\xff")
	got, err := c.Post(context.Background(), ts.url(t), header, body)
	if err != nil || got != http.StatusNoContent {
		t.Fatalf("Post = %d, %v; want 204, nil", got, err)
	}
	reqs := ts.requests()
	if len(reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost {
		t.Errorf("method = %s, want POST", r.Method)
	}
	if !bytes.Equal(r.Body, body) {
		t.Errorf("body = %q, want %q", r.Body, body)
	}
	for k, v := range header {
		if got := r.Header.Values(k); len(got) != 1 || got[0] != v {
			t.Errorf("%s = %q, want [%q]", k, got, v)
		}
	}
	// Beyond the given headers only what HTTP itself needs, and the
	// egress's Accept: never a credential, a cookie or a proxy header.
	extra := map[string]bool{"Content-Length": true, "User-Agent": true, "Accept": true}
	for k := range r.Header {
		if _, given := header[http.CanonicalHeaderKey(k)]; given {
			continue
		}
		if _, given := header[strings.ToLower(k)]; given {
			continue
		}
		if !extra[k] {
			t.Errorf("header %s: %q sent, not given", k, r.Header.Values(k))
		}
	}
	for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization", "X-Forwarded-For"} {
		if r.Header.Get(h) != "" {
			t.Errorf("%s sent: %q", h, r.Header.Get(h))
		}
	}
	if r.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Errorf("Content-Length = %q, want %d", r.Header.Get("Content-Length"), len(body))
	}
}

func TestPostRefusesHeaderInjection(t *testing.T) {
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
	for _, h := range []map[string]string{
		{"webhook-id": "a\r\nX-Injected: 1"},
		{"webhook-id\r\nX-Injected": "1"},
	} {
		if got, err := c.Post(context.Background(), ts.url(t), h, []byte(`{}`)); err == nil {
			t.Errorf("Post with header %q = %d, nil; want an error", h, got)
		}
	}
	for _, r := range ts.requests() {
		if r.Header.Get("X-Injected") != "" {
			t.Fatalf("an injected header arrived: %v", r.Header)
		}
	}
}

func TestPostTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	ts := startServer(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), timeout)
	start := time.Now()
	got, err := c.Post(context.Background(), ts.url(t), map[string]string{"Content-Type": "application/json"}, []byte(`{}`))
	took := time.Since(start)
	wantCode(t, err, ports.ErrTimeout)
	if got != 0 {
		t.Errorf("status = %d, want 0", got)
	}
	if took < timeout-50*time.Millisecond || took > timeout+2*time.Second {
		t.Fatalf("Post took %v, want about %v", took, timeout)
	}
}

func TestPostCallerCancelIsTimeout(t *testing.T) {
	ts := startServer(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Post(ctx, ts.url(t), nil, []byte(`{}`))
	if !errors.Is(err, ports.ErrTimeout) {
		t.Fatalf("Post under an expiring context = %v, want timeout", err)
	}
}

func TestPostHoldsNoConnection(t *testing.T) {
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
	for range 3 {
		if _, err := c.Post(context.Background(), ts.url(t), nil, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if n := ts.conns.Load(); n != 3 {
		t.Fatalf("3 posts used %d connections, want one each (no pooled connection between requests)", n)
	}
}
