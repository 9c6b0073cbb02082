package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// layersOf walks an assembled chain from the outside in, and returns its
// layers and what is left below them.
func layersOf(rt http.RoundTripper) ([]layer, http.RoundTripper) {
	var out []layer
	for {
		l, ok := rt.(*link)
		if !ok {
			return out, rt
		}
		out = append(out, l.layer)
		rt = l.next
	}
}

// swapped is the chain of g around base with layers a and b in each
// other's place.
func swapped(t *testing.T, g *guard, base http.RoundTripper, a, b string) http.RoundTripper {
	t.Helper()
	layers, _ := layersOf(chain(g, base))
	i := slices.IndexFunc(layers, func(l layer) bool { return l.name == a })
	j := slices.IndexFunc(layers, func(l layer) bool { return l.name == b })
	if i < 0 || j < 0 {
		t.Fatalf("no layer %q or %q", a, b)
	}
	layers[i], layers[j] = layers[j], layers[i]
	return assemble(base, layers)
}

// swapRow is one argued pair of chain.go's order: a
// property the chain keeps and the chain with the two layers swapped
// loses. holds builds its chain with build(t, g, base, swap).
type swapRow struct {
	property string
	swap     [2]string // the two layers swapped, in the chain's order
	holds    func(t *testing.T, swap []string) error
}

// build is the chain of g around base, or with swap the chain with the
// two layers of swap in each other's place.
func build(t *testing.T, g *guard, base http.RoundTripper, swap []string) http.RoundTripper {
	t.Helper()
	if swap == nil {
		return chain(g, base)
	}
	return swapped(t, g, base, swap[0], swap[1])
}

// oauthGuard is a layer guard whose credential layer gets its tokens from
// the fakeTokens it returns.
func oauthGuard(t *testing.T) (*guard, *fakeTokens) {
	g := layerGuard(t, server.NoCredential(), time.Minute, 100)
	tokens := &fakeTokens{}
	g.bearer = tokens
	return g, tokens
}

// resumeOn sends a resumption (a GET with Last-Event-ID) through rt.
func resumeOn(t *testing.T, rt http.RoundTripper, ctx context.Context, url string) error {
	t.Helper()
	req, _ := newRequest(t, ctx, http.MethodGet, url, "")
	req.Header.Set("Last-Event-ID", "e1")
	resp, err := rt.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	return err
}

// failHandshake sends the first request of a handshake through rt, which
// the server answers 406: a status that ends the handshake (the status
// layer fails the operation) and marks the operation only, not the
// session.
func failHandshake(t *testing.T, rt http.RoundTripper, ctx context.Context, op *recorder) {
	t.Helper()
	op.handshake.Store(true)
	req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("the handshake's first request: %v", err)
	}
	resp.Body.Close()
	if f := op.get(); f == nil || f.code != ports.ErrProtocol {
		t.Fatalf("after a 406 the handshake failed with %v, want a protocol error", f)
	}
}

const otherOrigin = "https://evil.test:8443/mcp"

// swapRows are the argued pairs.
var swapRows = []swapRow{{
	property: "a request to another origin is refused as one, and marks the session, even after a failed handshake",
	swap:     [2]string{"origin", "handshake"},
	holds: func(t *testing.T, swap []string) error {
		g := layerGuard(t, server.NoCredential(), time.Minute, 100)
		srv := &fakeServer{statuses: []int{http.StatusNotAcceptable}}
		rt := build(t, g, srv, swap)
		ctx, op := withRecorder(context.Background())
		failHandshake(t, rt, ctx, op)
		if s := g.session.get(); s != nil {
			t.Fatalf("the failed handshake marked the session: %v", s)
		}
		req, _ := newRequest(t, ctx, http.MethodPost, otherOrigin, "{}")
		_, err := rt.RoundTrip(req)
		if err == nil || srv.count() != 1 {
			t.Fatalf("the request to another origin: %v after %d requests; want it refused, nothing sent", err, srv.count())
		}
		var f *failure
		if !errors.As(err, &f) || f.code != ports.ErrRedirectRefused {
			return fmt.Errorf("the request to another origin failed with %v, not as one to another origin", err)
		}
		if s := g.session.get(); s == nil || s.code != ports.ErrRedirectRefused {
			return fmt.Errorf("the session is marked %v, want redirect_refused", s)
		}
		return nil
	},
}, {
	property: "a request to another origin spends none of the operation's resumptions",
	swap:     [2]string{"origin", "resumption"},
	holds: func(t *testing.T, swap []string) error {
		g := layerGuard(t, server.NoCredential(), time.Minute, 100)
		srv := &fakeServer{}
		rt := build(t, g, srv, swap)
		ctx, _ := withRecorder(context.Background())
		if err := resumeOn(t, rt, ctx, otherOrigin); err == nil || srv.count() != 0 {
			t.Fatalf("the resumption to another origin: %v after %d requests; want it refused, nothing sent", err, srv.count())
		}
		for i := range maxResumptions {
			if err := resumeOn(t, rt, ctx, layerURL); err != nil {
				return fmt.Errorf("resumption %d of %d to the pinned origin: %v", i+1, maxResumptions, err)
			}
		}
		if srv.count() != maxResumptions {
			t.Fatalf("%d requests sent, want %d", srv.count(), maxResumptions)
		}
		return nil
	},
}, {
	property: "a request to another origin costs no token request",
	swap:     [2]string{"origin", "credential"},
	holds: func(t *testing.T, swap []string) error {
		g, tokens := oauthGuard(t)
		srv := &fakeServer{}
		req, _ := newRequest(t, context.Background(), http.MethodPost, otherOrigin, "{}")
		if _, err := build(t, g, srv, swap).RoundTrip(req); err == nil || srv.count() != 0 {
			t.Fatalf("= %v after %d requests; want it refused, nothing sent", err, srv.count())
		}
		if tokens.tokenCalls != 0 {
			return fmt.Errorf("%d token requests for another origin", tokens.tokenCalls)
		}
		return nil
	},
}, {
	property: "after a failed handshake no token is fetched",
	swap:     [2]string{"handshake", "credential"},
	holds: func(t *testing.T, swap []string) error {
		g, tokens := oauthGuard(t)
		srv := &fakeServer{statuses: []int{http.StatusNotAcceptable}}
		rt := build(t, g, srv, swap)
		ctx, op := withRecorder(context.Background())
		failHandshake(t, rt, ctx, op)
		before := tokens.tokenCalls
		req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		if _, err := rt.RoundTrip(req); !errors.Is(err, op.get()) || srv.count() != 1 {
			t.Fatalf("the next request: %v after %d requests; want the handshake's failure, nothing more sent", err, srv.count())
		}
		if n := tokens.tokenCalls - before; n != 0 {
			return fmt.Errorf("%d token requests after the failed handshake", n)
		}
		return nil
	},
}, {
	property: "a resumption over the bound costs no token request",
	swap:     [2]string{"resumption", "credential"},
	holds: func(t *testing.T, swap []string) error {
		g, tokens := oauthGuard(t)
		srv := &fakeServer{}
		rt := build(t, g, srv, swap)
		ctx, _ := withRecorder(context.Background())
		for i := range maxResumptions {
			if err := resumeOn(t, rt, ctx, layerURL); err != nil {
				t.Fatalf("resumption %d of %d: %v", i+1, maxResumptions, err)
			}
		}
		before := tokens.tokenCalls
		err := resumeOn(t, rt, ctx, layerURL)
		wantFailure(t, err, ports.ErrProtocol)
		if srv.count() != maxResumptions {
			t.Fatalf("%d requests sent, want %d", srv.count(), maxResumptions)
		}
		if n := tokens.tokenCalls - before; n != 0 {
			return fmt.Errorf("%d token requests for the resumption over the bound", n)
		}
		return nil
	},
}, {
	property: "a 401 that one new token cures does not fail the operation",
	swap:     [2]string{"status", "credential"},
	holds: func(t *testing.T, swap []string) error {
		g, _ := oauthGuard(t)
		ctx, op := withRecorder(context.Background())
		req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		resp, err := build(t, g, &fakeServer{statuses: []int{401, 200}}, swap).RoundTrip(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("= %v, %v; want the retry's 200", resp, err)
		}
		if f := op.get(); f != nil {
			return fmt.Errorf("the operation failed with %v", f)
		}
		return nil
	},
}, {
	property: "a token fetch is outside the request's deadline, and a retry has its own",
	swap:     [2]string{"credential", "deadline"},
	holds: func(t *testing.T, swap []string) error {
		g, tokens := oauthGuard(t)
		srv := &fakeServer{statuses: []int{401, 200}}
		ctx, _ := withRecorder(context.Background())
		req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		if _, err := build(t, g, srv, swap).RoundTrip(req); err != nil || len(srv.sent) != 2 {
			t.Fatalf("= %v after %d requests", err, len(srv.sent))
		}
		for _, c := range tokens.ctxs {
			if _, ok := c.Deadline(); ok {
				return errors.New("a token was fetched under the request's deadline")
			}
		}
		if srv.sent[0].Context() == srv.sent[1].Context() {
			return errors.New("the retry shares the first attempt's deadline")
		}
		return nil
	},
}, {
	property: "too many bytes are response_too_large, even when the connection breaks in the same read",
	swap:     [2]string{"deadline", "cap"},
	holds: func(t *testing.T, swap []string) error {
		g := layerGuard(t, server.NoCredential(), time.Minute, 100)
		base := roundTripFunc(func(*http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(readerFunc(func(p []byte) (int, error) {
				return copy(p, strings.Repeat("x", 101)), errors.New("connection reset")
			}))}, nil
		})
		ctx, op := withRecorder(context.Background())
		req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		resp, err := build(t, g, base, swap).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		io.ReadAll(resp.Body)
		if f := op.get(); f == nil || f.code != ports.ErrResponseTooLarge {
			return fmt.Errorf("the operation failed with %v", f)
		}
		return nil
	},
}}

// TestSwappedLayersLoseTheirProperty: for each pair whose order chain.go
// argues, the chain keeps the property and the chain with the two
// swapped loses it.
func TestSwappedLayersLoseTheirProperty(t *testing.T) {
	for _, tt := range swapRows {
		t.Run(tt.property, func(t *testing.T) {
			if err := tt.holds(t, nil); err != nil {
				t.Errorf("the chain: %v", err)
			}
			err := tt.holds(t, tt.swap[:])
			if err == nil {
				t.Errorf("with %s and %s swapped the property still holds: the test cannot tell their order", tt.swap[0], tt.swap[1])
			}
			t.Logf("with %s and %s swapped: %v", tt.swap[0], tt.swap[1], err)
		})
	}
}
