package registry

import (
	"context"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// FindIssuer asks an MCP server which authorization server it names, so
// the register form can prefill the issuer for the admin to confirm
// (docs/oauth.md). Nothing is stored; no credential is sent.
type FindIssuer struct {
	URL string
}

// FindIssuerHandler finds issuers.
type FindIssuerHandler struct {
	s ServerDeps
	c ConnectDeps
}

// NewFindIssuerHandler returns the handler.
func NewFindIssuerHandler(s ServerDeps, c ConnectDeps) *FindIssuerHandler {
	return &FindIssuerHandler{s: s, c: c}
}

// Handle checks the gates, the URL's rules and the operator's allowlist
// (validation_failed on url) and its save-time address check
// (endpoint_not_public), then discovers
// the server's authorization server without a bound issuer and returns
// the issuer its metadata names (RFC 8414 issuer check included). The
// answer is a suggestion: it comes from the MCP server, so the admin
// confirms it before a secret is saved with it.
func (h *FindIssuerHandler) Handle(ctx context.Context, _ ports.Principal, q FindIssuer) (string, error) {
	if err := h.s.Gates.Check(); err != nil {
		return "", err
	}
	u, err := server.ParseURL(q.URL)
	if err != nil {
		return "", srvDomainError(err)
	}
	if err := h.s.Allowed.Check(u); err != nil {
		return "", srvDomainError(err)
	}
	if err := h.s.checkEndpoint(ctx, u); err != nil {
		return "", err
	}
	md, err := h.c.OAuth.Discover(ctx, u, "")
	if err != nil {
		return "", oauthFailure("OAuth discovery", err)
	}
	if md.Issuer == "" {
		return "", oauthFailure("OAuth discovery", ports.ErrOAuthMetadata)
	}
	if _, err := server.ParseIssuer(md.Issuer); err != nil {
		return "", &app.Error{Code: app.CodeProtocolError, Message: "OAuth discovery: the issuer the server names is not an https URL", Cause: err}
	}
	return md.Issuer, nil
}
