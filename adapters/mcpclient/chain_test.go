package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// chainOrder is the order of the package doc ("The chain"), outermost
// first, with the guard method each layer runs.
var chainOrder = []struct{ name, method string }{
	{"origin", "originLock"},
	{"handshake", "handshakeOnce"},
	{"resumption", "resumptionBound"},
	{"status", "classifyStatus"},
	{"credential", "credential"},
	{"deadline", "deadline"},
	{"cap", "byteCap"},
}

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

// methodOf names the guard method a layer's step is bound to.
func methodOf(step any) string {
	name := runtime.FuncForPC(reflect.ValueOf(step).Pointer()).Name()
	name = strings.TrimSuffix(name, "-fm")
	return name[strings.LastIndex(name, ".")+1:]
}

// TestTheChainIsAssembledInOrder: the transport the session uses is the
// layers of the package doc, in its order, each running its own step,
// around the session's *http.Transport.
func TestTheChainIsAssembledInOrder(t *testing.T) {
	g := newGuard(Options{Timeout: time.Second}, ports.MCPTarget{URL: mustURL(t, "https://mcp.test/mcp")}, 1024)
	hc, tr := g.httpClient(nil)
	layers, base := layersOf(hc.Transport)
	var got, want []string
	for _, l := range layers {
		got = append(got, l.name+"="+methodOf(l.step))
	}
	for _, o := range chainOrder {
		want = append(want, o.name+"="+o.method)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the chain is\n\t%v\nwant\n\t%v", got, want)
	}
	if base != http.RoundTripper(tr) {
		t.Errorf("below the layers: %T, want the session's transport", base)
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

// TestSwappedLayersLoseTheirProperty: for the pairs whose order the
// package doc argues, the chain keeps the property and the chain with
// the two swapped loses it.
func TestSwappedLayersLoseTheirProperty(t *testing.T) {
	oauthGuard := func(t *testing.T) (*guard, *fakeTokens) {
		g := layerGuard(t, server.NoCredential(), time.Minute, 100)
		tokens := &fakeTokens{}
		g.bearer = tokens
		return g, tokens
	}
	build := func(t *testing.T, g *guard, base http.RoundTripper, swap []string) http.RoundTripper {
		if swap == nil {
			return chain(g, base)
		}
		return swapped(t, g, base, swap[0], swap[1])
	}
	for _, tt := range []struct {
		property string
		swap     []string // the two layers swapped
		holds    func(t *testing.T, swap []string) error
	}{{
		property: "a request to another origin costs no token request",
		swap:     []string{"origin", "credential"},
		holds: func(t *testing.T, swap []string) error {
			g, tokens := oauthGuard(t)
			req, _ := newRequest(t, context.Background(), http.MethodPost, "https://evil.test:8443/mcp", "{}")
			build(t, g, &fakeServer{}, swap).RoundTrip(req)
			if tokens.tokenCalls != 0 {
				return fmt.Errorf("%d token requests for another origin", tokens.tokenCalls)
			}
			return nil
		},
	}, {
		property: "a 401 that one new token cures does not fail the operation",
		swap:     []string{"status", "credential"},
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
		swap:     []string{"credential", "deadline"},
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
		swap:     []string{"deadline", "cap"},
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
	}} {
		t.Run(tt.property, func(t *testing.T) {
			if err := tt.holds(t, nil); err != nil {
				t.Errorf("the chain: %v", err)
			}
			if err := tt.holds(t, tt.swap); err == nil {
				t.Errorf("with %s and %s swapped the property still holds: the test cannot tell their order", tt.swap[0], tt.swap[1])
			}
		})
	}
}
