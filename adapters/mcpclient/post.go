package mcpclient

import (
	"context"
	"net/http"

	"github.com/codelotse/codelotse/domain/server"
)

// Post sends body to u through the guarded egress of MCP servers and
// OAuth requests: https only, the address rules for every address u's host
// resolves to, no proxy, no redirect (a 3xx answer is refused), the
// timeout; the answer's body is read up to MaxOAuthResponseBytes and
// dropped. header is sent as given (Content-Type among it). It returns
// the status, or the egress error (ports.ErrAddressBlocked,
// ports.ErrRedirectRefused, ports.ErrTimeout, …), which never names u.
func (c *Connector) Post(ctx context.Context, u server.URL, header map[string]string, body []byte) (int, error) {
	resp, f := c.egress().send(ctx, oauthRequest{method: http.MethodPost, url: u, jsonBody: body, header: header})
	if f != nil {
		return 0, f.code
	}
	return resp.status, nil
}
