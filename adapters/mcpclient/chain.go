package mcpclient

import "net/http"

// layer is one link of the guarded transport: its name and the step it
// takes around the rest of the chain (next). A step has one job; the
// steps are in layers.go.
type layer struct {
	name string
	step func(next http.RoundTripper, req *http.Request) (*http.Response, error)
}

// link is a layer bound to the rest of the chain.
type link struct {
	layer
	next http.RoundTripper
}

func (l *link) RoundTrip(req *http.Request) (*http.Response, error) { return l.step(l.next, req) }

// chain is the guarded transport: the layers around base (the session's
// *http.Transport, whose dial is the guard's), outermost first. A request
// passes them top to bottom, its answer bottom to top. The order is the
// security argument of the package doc; TestTheChainIsAssembledInOrder
// reads it back and TestSwappedLayersLoseTheirProperty shows, for each
// pair the doc argues, what the swap would break; cmd/archlint checks
// the order in this literal. Keep this the only place that orders them.
func chain(g *guard, base http.RoundTripper) http.RoundTripper {
	return assemble(base, []layer{
		{"origin", g.originLock},
		{"handshake", g.handshakeOnce},
		{"resumption", g.resumptionBound},
		{"status", g.classifyStatus},
		{"credential", g.credential},
		{"deadline", g.deadline},
		{"cap", g.byteCap},
	})
}

// assemble links layers around base, layers[0] outermost.
func assemble(base http.RoundTripper, layers []layer) http.RoundTripper {
	rt := base
	for i := len(layers) - 1; i >= 0; i-- {
		rt = &link{layer: layers[i], next: rt}
	}
	return rt
}
