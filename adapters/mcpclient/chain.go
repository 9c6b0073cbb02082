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
// *http.Transport, whose dial is the guard's: resolve, check every
// address, Control hook), outermost first. A request passes them top to
// bottom, its answer bottom to top. TestSwappedLayersLoseTheirProperty
// shows, for each pair argued here, what a swap breaks. This is the only
// place that orders them:
//
//   - origin: a request to another origin is refused, and so is an answer
//     that redirects (3xx). Outermost, so nothing else runs for such a
//     request: no handshake answers it in the lock's stead, no resumption is
//     counted, no token is fetched for it.
//   - handshake: once a request of the handshake failed, the operation sends
//     nothing more (no second protocol era). Before the credential: no token
//     is fetched after a failed handshake.
//   - resumption: an operation resumes its event stream (GET with
//     Last-Event-ID) at most twice. Inside the origin lock (it counts the pinned
//     origin's requests only), before the credential (a resumption over the
//     bound costs no token).
//   - status: the final answer's status gives the operation its code (401
//     and 403 unauthorized, 429 rate limited, 5xx unreachable, during the
//     handshake any 4xx but 400, 404 and 405 a protocol error). Outside the
//     credential: it judges the answer after the one retry, so a 401 a new
//     token cures does not fail the operation.
//   - credential: the static header or the OAuth access token, on a copy of
//     the request; after a 401 one new token per operation and the request
//     once more. Inside the origin lock: a credential goes to the pinned
//     origin only. Outside the deadline: the token is fetched under the
//     operation's context, and the retry gets a deadline of its own (and
//     passes the cap again).
//   - deadline: each request, body included, within the timeout; transport
//     failures get their codes. Outside the cap, so the cap judges each read
//     first: a body over the cap is response_too_large even when the
//     deadline ends in the same read.
//   - cap: the bodies of an operation's answers stream at most the cap
//     together. Innermost: it counts what the server sent before anything
//     else reads it.
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
