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
// one job (layers.go), assembled and ordered in one place, chain.go,
// where each layer's place is argued.
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
