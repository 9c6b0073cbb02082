package server

import (
	"time"

	"github.com/codelotse/codelotse/domain/field"
	uid "github.com/codelotse/codelotse/domain/id"

	"github.com/codelotse/codelotse/domain/tool"
)

// Server is a tenant's registered MCP server. It knows whether it has a
// credential and the credential's hint; the secret itself is stored
// separately, encrypted, and never lives on the entity.
type Server struct {
	id              string
	tenantID        string
	name            Name
	url             URL
	enabled         bool
	credKind        CredentialKind
	credHint        string
	oauth           OAuthView // the OAuth kinds' public part; zero otherwise
	acknowledgedAt  time.Time
	lastDiscoveryAt time.Time
	lastError       string
	callLimit       CallLimit
	tools           []tool.Snapshot
	// states holds the allowlisted tools that are not pinned (changed or
	// gone); listed the names of the last listing. Both are replaced, never
	// changed in place, so a shallow copy of a Server is a safe copy.
	states    map[string]ToolStatus
	listed    []string
	createdAt time.Time
	updatedAt time.Time
}

// NewServer registers a server, enabled, with an empty allowlist. id and
// tenantID are UUIDs chosen by the caller. acknowledged is the admin's
// data-sharing acknowledgement and must be true ([ErrAcknowledgementRequired]).
// The caller encrypts cred.MarshalSecret() separately; the server keeps only
// its kind and hint.
func NewServer(id, tenantID string, name Name, url URL, cred Credential, acknowledged bool, now time.Time) (*Server, error) {
	if !uid.Valid(id) {
		return nil, &field.Error{Field: "id", Reason: "must be a UUID"}
	}
	if !uid.Valid(tenantID) {
		return nil, &field.Error{Field: "tenantId", Reason: "must be a UUID"}
	}
	if name.IsZero() {
		return nil, &field.Error{Field: "name", Reason: "is required"}
	}
	if url.IsZero() {
		return nil, &field.Error{Field: "url", Reason: "is required"}
	}
	if cred.IsZero() {
		return nil, &field.Error{Field: "auth", Reason: "is required"}
	}
	if !acknowledged {
		return nil, ErrAcknowledgementRequired
	}
	return &Server{
		id:             id,
		tenantID:       tenantID,
		name:           name,
		url:            url,
		enabled:        true,
		credKind:       cred.Kind(),
		credHint:       cred.Hint(),
		oauth:          cred.View(),
		acknowledgedAt: now,
		tools:          []tool.Snapshot{},
		createdAt:      now,
		updatedAt:      now,
	}, nil
}

// UnmarshalServerFromDatabase rebuilds a stored server for the store
// adapter, without the rules of [NewServer] and [Server.Apply] (no
// acknowledgement or tool-count checks), so rows written under older rules
// still load. Three things are parsed all the same: the URL, because it is
// dialled and must pass today's MC1 rules even if the row was tampered
// with, the credential kind, an enum, and the calls-per-minute limit
// (0 for none, else 1 to [limits.MaxCallsPerMinute]), which a call
// is held to. Zero times mean "never".
func UnmarshalServerFromDatabase(
	id, tenantID, name, rawURL string,
	enabled bool,
	credentialKind, credentialHint string,
	oauth OAuthView,
	acknowledgedAt, lastDiscoveryAt time.Time,
	lastError string,
	maxCallsPerMinute int,
	tools []tool.Snapshot,
	createdAt, updatedAt time.Time,
) (*Server, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	kind, err := ParseCredentialKind(credentialKind)
	if err != nil {
		return nil, err
	}
	var callLimit CallLimit
	if maxCallsPerMinute != 0 {
		if callLimit, err = ParseCallLimit(&maxCallsPerMinute); err != nil {
			return nil, err
		}
	}
	return &Server{
		id:              id,
		tenantID:        tenantID,
		name:            Name{name},
		url:             u,
		enabled:         enabled,
		credKind:        kind,
		credHint:        credentialHint,
		oauth:           cloneView(oauth),
		acknowledgedAt:  acknowledgedAt,
		lastDiscoveryAt: lastDiscoveryAt,
		lastError:       lastError,
		callLimit:       callLimit,
		tools:           append([]tool.Snapshot{}, tools...),
		createdAt:       createdAt,
		updatedAt:       updatedAt,
	}, nil
}

// ID is the server's UUID.
func (s *Server) ID() string { return s.id }

// TenantID is the owning tenant's UUID.
func (s *Server) TenantID() string { return s.tenantID }

// Name is the server's name.
func (s *Server) Name() Name { return s.name }

// URL is the server's endpoint.
func (s *Server) URL() URL { return s.url }

// Enabled reports whether reviews may use the server.
func (s *Server) Enabled() bool { return s.enabled }

// CredentialKind is the kind of the stored credential.
func (s *Server) CredentialKind() CredentialKind { return s.credKind }

// CredentialHint is the hint of the stored credential ("" for none).
func (s *Server) CredentialHint() string { return s.credHint }

// OAuth is the public part of an OAuth credential (client id, scopes,
// token URL, and the code flow's connection); zero for the other kinds.
func (s *Server) OAuth() OAuthView { return cloneView(s.oauth) }

func cloneView(v OAuthView) OAuthView {
	if v.Scopes != nil {
		v.Scopes = append([]string{}, v.Scopes...)
	}
	return v
}

// Connect records the connection of a code-flow server: cred is the
// stored credential with [Credential.WithConnection] applied (and, after
// dynamic registration, [Credential.WithRegisteredClient]). The caller
// replaces the sealed credential in the same update.
func (s *Server) Connect(cred Credential, now time.Time) error {
	if s.credKind != KindOAuthAuthorizationCode || cred.Kind() != KindOAuthAuthorizationCode {
		return &field.Error{Field: "auth.type", Reason: "must be oauth_authorization_code to connect"}
	}
	o, _ := cred.OAuth()
	if !o.Connected() {
		return &field.Error{Field: "auth.connection", Reason: "is required"}
	}
	s.credHint, s.oauth = cred.Hint(), cred.View()
	s.updatedAt = now
	return nil
}

// RegisterClient records a client registered dynamically for the code
// flow (cred is the stored credential with
// [Credential.WithRegisteredClient] applied): its client id and issuer
// show from now on, and later connections reuse it. The caller replaces
// the sealed credential in the same update.
func (s *Server) RegisterClient(cred Credential, now time.Time) error {
	o, _ := cred.OAuth()
	if s.credKind != KindOAuthAuthorizationCode || cred.Kind() != KindOAuthAuthorizationCode || o.ClientID == "" || o.Issuer == "" {
		return &field.Error{Field: "auth.clientId", Reason: "only a code-flow server takes a registered client"}
	}
	s.credHint, s.oauth = cred.Hint(), cred.View()
	s.updatedAt = now
	return nil
}

// RefuseConnection records a refused Connect: the last error becomes
// server_unauthorized and the view says why (reason, e.g.
// [RefusedIssuerMismatch]).
func (s *Server) RefuseConnection(reason string) {
	s.lastError = lastErrorUnauthorized
	if s.credKind == KindOAuthAuthorizationCode {
		s.oauth.Refused = reason
	}
}

// HasCredential reports whether a secret is stored for the server.
func (s *Server) HasCredential() bool { return s.credKind != KindNone }

// AcknowledgedAt is when the data-sharing acknowledgement was given for
// the current URL; zero when it was withdrawn.
func (s *Server) AcknowledgedAt() time.Time { return s.acknowledgedAt }

// Acknowledged reports whether the current URL has an acknowledgement, one
// of the conditions for a tool call.
func (s *Server) Acknowledged() bool { return !s.acknowledgedAt.IsZero() }

// LastDiscoveryAt is when discovery last ran; zero when never.
func (s *Server) LastDiscoveryAt() time.Time { return s.lastDiscoveryAt }

// LastError is the fixed code of the last failure ("" when none).
func (s *Server) LastError() string { return s.lastError }

// MaxCallsPerMinute is the server's calls-per-minute limit (none by
// default); a call is held to [CallCap.Effective] of it.
func (s *Server) MaxCallsPerMinute() CallLimit { return s.callLimit }

// Tools returns a copy of the allowlist.
func (s *Server) Tools() []tool.Snapshot { return append([]tool.Snapshot{}, s.tools...) }

// CreatedAt is when the server was registered.
func (s *Server) CreatedAt() time.Time { return s.createdAt }

// UpdatedAt is when the server last changed.
func (s *Server) UpdatedAt() time.Time { return s.updatedAt }

// Patch is a partial update; nil fields stay as they are. Name, URL and
// Credential must come from [ParseName], [ParseURL] and the credential
// constructors: a zero value in a set field is refused.
type Patch struct {
	// Name renames the server.
	Name *Name
	// URL moves the server; needs Acknowledged true in the same patch.
	URL *URL
	// Credential replaces the credential ([NoCredential] removes it).
	Credential *Credential
	// Acknowledged true gives the data-sharing acknowledgement (again);
	// false withdraws it, which stops reviews from using the server.
	Acknowledged *bool
	// Enabled switches the server on or off for reviews.
	Enabled *bool
	// MaxCallsPerMinute sets the server's calls-per-minute limit (from
	// [ParseCallLimit]); [NoCallLimit] removes it.
	MaxCallsPerMinute *CallLimit
}

// Names of changed fields reported by [Server.Apply], in this order.
const (
	ChangedName         = "name"
	ChangedURL          = "url"
	ChangedAuth         = "auth"
	ChangedAcknowledged = "acknowledged"
	ChangedEnabled      = "enabled"
	ChangedCallLimit    = "maxCallsPerMinute"
	ChangedTools        = "tools"
)

// Apply applies p at time now, all or nothing, and returns the names of
// the fields that changed (never their values) for the audit log. Rules:
//
//   - a URL change needs p.Acknowledged true ([ErrAcknowledgementRequired]);
//     it empties the tool allowlist and sets the acknowledgement time to now,
//     because the tools were approved for another endpoint;
//   - a host change on a server that has a credential needs p.Credential
//     ([ErrCredentialRequired]). Host means the normalised host name
//     without port: the credential was given for that host, and a port
//     change on the same host stays with the same operator;
//   - any URL change on a server with an OAuth credential needs
//     p.Credential too ([ErrCredentialRequired]): its tokens are bound to
//     the full server URL (RFC 8707's resource indicator), and the code
//     flow's connection was made for that resource;
//   - a credential in the patch always counts as a change, as secrets are
//     not compared;
//   - Acknowledged true on an acknowledged server keeps its time.
//
// A patch that changes nothing leaves updatedAt alone.
func (s *Server) Apply(p Patch, now time.Time) ([]string, error) {
	urlChanged, err := s.check(p)
	if err != nil {
		return nil, err
	}
	changed := s.apply(p, urlChanged, now)
	if len(changed) > 0 {
		s.updatedAt = now
	}
	return changed, nil
}

// check applies Apply's rules to p before anything changes, and reports
// whether p moves the server to another URL.
func (s *Server) check(p Patch) (urlChanged bool, err error) {
	if p.Name != nil && p.Name.IsZero() {
		return false, &field.Error{Field: "name", Reason: "is required"}
	}
	if p.URL != nil && p.URL.IsZero() {
		return false, &field.Error{Field: "url", Reason: "is required"}
	}
	if p.Credential != nil && p.Credential.IsZero() {
		return false, &field.Error{Field: "auth", Reason: "is required"}
	}
	urlChanged = p.URL != nil && *p.URL != s.url
	if urlChanged && (p.Acknowledged == nil || !*p.Acknowledged) {
		return false, ErrAcknowledgementRequired
	}
	if urlChanged && p.Credential == nil && s.HasCredential() && (p.URL.Host() != s.url.Host() || s.credKind.IsOAuth()) {
		return false, ErrCredentialRequired
	}
	return urlChanged, nil
}

// apply changes s as the checked p says and names the changed fields.
func (s *Server) apply(p Patch, urlChanged bool, now time.Time) []string {
	var changed []string
	if p.Name != nil && *p.Name != s.name {
		s.name = *p.Name
		changed = append(changed, ChangedName)
	}
	if urlChanged {
		s.url = *p.URL
		changed = append(changed, ChangedURL)
	}
	if p.Credential != nil {
		s.credKind, s.credHint, s.oauth = p.Credential.Kind(), p.Credential.Hint(), p.Credential.View()
		changed = append(changed, ChangedAuth)
	}
	ack := p.Acknowledged != nil && *p.Acknowledged
	switch {
	case urlChanged || (ack && !s.Acknowledged()):
		s.acknowledgedAt = now
		changed = append(changed, ChangedAcknowledged)
	case p.Acknowledged != nil && !ack && s.Acknowledged():
		s.acknowledgedAt = time.Time{}
		changed = append(changed, ChangedAcknowledged)
	}
	if p.Enabled != nil && *p.Enabled != s.enabled {
		s.enabled = *p.Enabled
		changed = append(changed, ChangedEnabled)
	}
	if p.MaxCallsPerMinute != nil && *p.MaxCallsPerMinute != s.callLimit {
		s.callLimit = *p.MaxCallsPerMinute
		changed = append(changed, ChangedCallLimit)
	}
	if urlChanged {
		if len(s.tools) > 0 {
			s.tools = []tool.Snapshot{}
			changed = append(changed, ChangedTools)
		}
		// Another endpoint: nothing of what the old one listed holds.
		s.states, s.listed = nil, nil
	}
	return changed
}

// RecordDiscovery notes a discovery at time at; lastError is its fixed
// failure code, or "" on success.
func (s *Server) RecordDiscovery(at time.Time, lastError string) {
	s.lastDiscoveryAt = at
	s.RecordError(lastError)
}

// RecordError sets the last error code (for example tool_changed from a
// review run) without a discovery.
// A code other than server_unauthorized ends a refused connection's
// reason.
func (s *Server) RecordError(code string) {
	s.lastError = code
	if code != lastErrorUnauthorized {
		s.oauth.Refused = ""
	}
}
