// Package mcpclient is the egress path of MCP context (docs/threat-model.md:
// MC1, MC2, MC8, MC11): the guarded HTTP client that every MCP
// connection goes through, in every edition, and the go-sdk client on top
// of it that implements [ports.MCPConnector].
//
// The guarded client
//
//   - speaks https only, to exactly one origin (the configured URL's
//     scheme, host and port); any other request is refused before it is
//     sent, and the credential header is added only to requests to that
//     origin;
//   - resolves the host itself, checks every address with
//     [netpolicy.Rules.Check] and dials the checked IP literal; a
//     [net.Dialer] Control hook checks the address again right before the
//     socket connects, so no resolver answer can slip past the rules;
//   - uses its own connection pool per session, no proxy from the
//     environment, TLS 1.2 or newer, no transparent decompression;
//   - refuses redirects, also to another path of the same origin;
//   - aborts every HTTP request, body included, after [Options.Timeout],
//     and every MCP operation after the same timeout, whatever number of
//     requests it took;
//   - fails a response as soon as the responses of its MCP operation
//     stream more than the byte cap together;
//   - lets the SDK resume an event stream that the server closed before
//     the answer (a GET with Last-Event-ID, to the configured endpoint)
//     at most twice per operation, within its deadline and byte cap;
//   - reports a 401 or 403 as [ports.ErrServerUnauthorized].
//
// # The chain
//
// The round tripper of the guarded client is a chain of layers, each with
// one job (layers.go), assembled in one place: the function chain in
// chain.go, from an ordered list of named layers. A request passes them
// from the first to the last, its answer from the last to the first.
// Below them is the session's [http.Transport], whose dial is the
// guard's (resolve, check every address, Control hook). The order is the
// argument:
//
//  1. origin: a request to another origin is refused, and an answer that
//     redirects (3xx) is refused. Outermost, so that nothing else runs for
//     a request to another origin: the handshake layer does not answer it
//     in the origin lock's stead (it is refused as another origin's, and
//     marks the session, after a failed handshake too), no resumption is
//     counted for it, and no token is fetched for it. The status, deadline
//     and cap layers let a refusal pass unchanged, so their place below
//     the origin lock is no argument. On the way back it refuses a 3xx
//     before the client could follow it.
//  2. handshake: once a request of the handshake failed, the operation
//     sends nothing more (no second protocol era). Before the credential,
//     so that after a failed handshake no token is fetched; like every
//     refusal above the transport, it opens no connection.
//  3. resumption: an operation resumes its event stream (GET with
//     Last-Event-ID) at most twice. Inside the origin lock, so that it
//     counts requests to the pinned origin only: a request to another
//     origin spends none of the operation's resumptions. Before the
//     credential, so that a resumption over the bound costs no token.
//  4. status: the final answer's status gives the operation its code
//     (401 and 403 unauthorized, 429 and 5xx unreachable, during the
//     handshake any other 4xx than 400, 404 and 405 a protocol error).
//     Outside the credential layer, so that it judges only the answer
//     after the one retry: a 401 that a new token cures does not fail the
//     operation (nor, through the handshake layer, end a handshake).
//  5. credential: the static header, or the OAuth access token, on a copy
//     of the request; after a 401 one new token per operation and the
//     request once more, never a second time. Inside the origin lock, so
//     that no token is fetched for a request to another origin (and a
//     credential is attached only to requests to the pinned origin).
//     Outside the deadline, on purpose: the token is fetched under the
//     caller's context (the operation's deadline), not the request's, so
//     a token fetch does not eat into the request's timeout, and the
//     retry gets a deadline of its own (and passes the cap again). The
//     caller never waits for a token past its own context; the token
//     request itself is bounded apart (three timeouts, see
//     bearerSource.fetch) and runs on for other waiters and for saving a
//     rotated refresh token (docs/oauth.md).
//  6. deadline: each request that is sent, body included, within the
//     timeout; an answer that comes as the deadline passes is a timeout;
//     transport failures get their codes. Inside the credential layer,
//     so that each attempt has its own; outside the cap, so that the cap
//     judges each read first: a body over the cap is response_too_large
//     even when the deadline or the connection ends in the same read.
//  7. cap: the bodies of an operation's answers stream at most the cap
//     together, and the transfer is dropped as soon as they exceed it.
//     Innermost, on the body as the transport returns it: it counts what
//     the server sent before any other layer, the SDK or its parser reads
//     it. Of the layers only the deadline reads a body (the origin lock
//     and the credential layer close a 3xx's or a 401's unread), so the
//     deadline is the one its place is argued against.
//
// TestTheChainIsAssembledInOrder pins this order, and
// TestSwappedLayersLoseTheirProperty shows, one row each, that the chain
// keeps the property and the chain with the two swapped loses it for
// these pairs: origin and handshake, origin and resumption, origin and
// credential, handshake and credential, resumption and credential, status
// and credential, credential and deadline, deadline and cap. These are
// all the pairs argued above; TestTheDocNamesEverySwappedPair keeps this
// list the test's.
//
// OAuth (docs/oauth.md): for the OAuth credential kinds the connector
// fetches access tokens (client credentials, or the refresh token of a
// connected code flow, always with RFC 8707's resource) at the
// credential's token URL only, through a guard of their own for that
// origin; caches them in memory per server and credential; sends them
// only to the server's origin as a bearer token; refreshes once after a
// 401; and saves a rotated refresh token before it uses the access token.
// [OAuthClient] makes the requests of the code-flow connection (RFC 9728
// and RFC 8414 discovery, RFC 7591 registration, the code exchange)
// through the same guard.
//
// Failures leave the package as the fixed sentinels of ports (wrapped, so
// errors.Is works); the text of an error is the code alone and never names
// the URL, the host or an address. Causes go to the debug log.
//
// The MCP client is [mcp.Client] over [mcp.StreamableClientTransport]
// only. It falls back from server/discover to initialize only when the
// server answered that it does not know the method or the version, never
// after a timeout or a dropped connection. It advertises no capabilities, answers every server-initiated
// request except ping with JSON-RPC "method not found" (-32601), does not
// fulfil multi-round-trip input requests, and does not open the standalone
// SSE stream.
package mcpclient
