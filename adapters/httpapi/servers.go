package httpapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/poison"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ServerRoutes serves /v1/mcp/servers (tenant:manage): register, list,
// read, change and delete MCP servers. Discovery and the tool allowlist
// are another route group.
type ServerRoutes struct {
	create *registry.CreateServerHandler
	get    *registry.GetServerHandler
	list   *registry.ListServersHandler
	patch  *registry.PatchServerHandler
	del    *registry.DeleteServerHandler
	// findings reads the poisoning rules over each serverDefinition.
	findings *registry.Findings
	// allowed is the operator's allowlist of URLs, which the status reads.
	allowed server.AllowedURLs
}

// NewServerRoutes returns the server route group.
func NewServerRoutes(
	create *registry.CreateServerHandler,
	get *registry.GetServerHandler,
	list *registry.ListServersHandler,
	patch *registry.PatchServerHandler,
	del *registry.DeleteServerHandler,
	findings *registry.Findings,
	allowed server.AllowedURLs,
) *ServerRoutes {
	return &ServerRoutes{create: create, get: get, list: list, patch: patch, del: del, findings: findings, allowed: allowed}
}

// ServerView is the API's ServerView (openapi.yaml). It has no field
// that could hold a secret: of the credential only its type and hint.
type ServerView struct {
	ID              string         `json:"id"`
	Name            string         `json:"name"`
	URL             string         `json:"url"`
	Enabled         bool           `json:"enabled"`
	Auth            ServerAuthView `json:"auth"`
	AcknowledgedAt  *string        `json:"acknowledgedAt"`
	LastDiscoveryAt *string        `json:"lastDiscoveryAt"`
	LastError       *string        `json:"lastError"`
	Status          string         `json:"status"`
	// MaxCallsPerMinute is the server's calls-per-minute limit across
	// reviews; null when it has none.
	MaxCallsPerMinute *int               `json:"maxCallsPerMinute"`
	Tools             []ToolSnapshotView `json:"tools"`
	CreatedAt         *string            `json:"createdAt"`
	UpdatedAt         *string            `json:"updatedAt"`
}

// ServerAuthView is the credential's type and, when there is a
// credential, its hint ("Bearer …wxyz"); for the OAuth kinds also the
// client id and the scopes, and for the code flow the connection.
type ServerAuthView struct {
	Type       string               `json:"type"`
	Hint       string               `json:"hint,omitempty"`
	ClientID   *string              `json:"clientId,omitempty"`
	Scopes     *[]string            `json:"scopes,omitempty"` // [] for an OAuth kind without scopes
	Connection *OAuthConnectionView `json:"connection,omitempty"`
	// Issuer is the authorization server: the admin's, or for the code
	// flow the one a registration or connection pinned.
	Issuer string `json:"issuer,omitempty"`
	// ClientAuth is the OAuth kinds' client authentication method.
	ClientAuth string `json:"clientAuth,omitempty"`
}

// OAuthConnectionView is the code flow's connection: "connected" with
// who connected the server and when, or "needs_connection" with both null.
type OAuthConnectionView struct {
	State string  `json:"state"`
	By    *string `json:"by"`
	At    *string `json:"at"`
	// Refused is why the last Connect was refused (issuer_mismatch).
	Refused string `json:"refused,omitempty"`
}

// Connection states of [OAuthConnectionView].
const (
	ConnectionConnected = "connected"
	ConnectionNeeded    = "needs_connection"
)

func newServerAuthView(s *server.Server) ServerAuthView {
	a := ServerAuthView{Type: s.CredentialKind().String()}
	if s.HasCredential() {
		a.Hint = s.CredentialHint()
	}
	if !s.CredentialKind().IsOAuth() {
		return a
	}
	o := s.OAuth()
	scopes := o.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	a.ClientID, a.Scopes, a.Issuer, a.ClientAuth = &o.ClientID, &scopes, o.Issuer, string(o.ClientAuth)
	if s.CredentialKind() == server.KindOAuthAuthorizationCode {
		a.Connection = &OAuthConnectionView{State: ConnectionNeeded}
		// A connection without a refresh token ends with its access
		// token: it then needs a new connection.
		if o.Connected(time.Now()) {
			by := o.ConnectedBy
			a.Connection = &OAuthConnectionView{State: ConnectionConnected, By: &by, At: timeJSON(o.ConnectedAt)}
		}
		a.Connection.Refused = o.Refused
	}
	return a
}

// toolJSON is what openapi.yaml spells the same in a discovered tool
// (DiscoveredTool) and an allowlisted one (ToolSnapshot): one definition,
// embedded in both, so the two answers cannot drift apart. The database's
// tools column has its own format (adapters/postgres), which follows the
// schema's migrations rather than the API.
type toolJSON struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	Annotations  json.RawMessage `json:"annotations"`
	WriteCapable bool            `json:"writeCapable"`
	Hash         string          `json:"hash"`
}

// ToolSnapshotView is the API's ToolSnapshot: one allowlisted tool, its
// state as of the last listing, and the server's own definition as
// approved (null for a tool approved before it was kept).
type ToolSnapshotView struct {
	toolJSON
	ApprovedAt       *string               `json:"approvedAt"`
	State            string                `json:"state"`
	ServerDefinition *ServerDefinitionView `json:"serverDefinition"`
}

// ServerDefinitionView is a tool's definition as the server sent it,
// with what the poisoning rules find in it.
type ServerDefinitionView struct {
	Description string            `json:"description"`
	InputSchema json.RawMessage   `json:"inputSchema"`
	Annotations json.RawMessage   `json:"annotations"`
	Findings    []toolFindingJSON `json:"findings"`
}

// toolFindingJSON is one finding of the poisoning rules (CONTRACT §8).
type toolFindingJSON struct {
	Code    string `json:"code"`
	Excerpt string `json:"excerpt"`
}

// newFindingsJSON is never null: an empty list when nothing was found.
func newFindingsJSON(fs []poison.Finding) []toolFindingJSON {
	out := make([]toolFindingJSON, len(fs))
	for i, f := range fs {
		out[i] = toolFindingJSON{Code: f.Code, Excerpt: f.Excerpt}
	}
	return out
}

// NewServerView builds the view of s. Times are RFC 3339 in UTC, null
// when zero ("never"); lastError is null when empty; tools is never null.
// f reads the findings of each tool's serverDefinition; the status is
// decided under the operator's allowlist of URLs (outside_allowlist).
func NewServerView(s *server.Server, f *registry.Findings, allowed server.AllowedURLs) ServerView {
	v := ServerView{
		ID:              s.ID(),
		Name:            s.Name().String(),
		URL:             s.URL().String(),
		Enabled:         s.Enabled(),
		Auth:            newServerAuthView(s),
		AcknowledgedAt:  timeJSON(s.AcknowledgedAt()),
		LastDiscoveryAt: timeJSON(s.LastDiscoveryAt()),
		Status:          string(s.StatusUnder(allowed, time.Now())),
		Tools:           []ToolSnapshotView{},
		CreatedAt:       timeJSON(s.CreatedAt()),
		UpdatedAt:       timeJSON(s.UpdatedAt()),
	}
	if e := s.LastError(); e != "" {
		v.LastError = &e
	}
	if n, ok := s.MaxCallsPerMinute().PerMinute(); ok {
		v.MaxCallsPerMinute = &n
	}
	for _, t := range s.Tools() {
		v.Tools = append(v.Tools, newToolSnapshotView(s, t, f))
	}
	return v
}

func newToolSnapshotView(s *server.Server, t tool.Snapshot, f *registry.Findings) ToolSnapshotView {
	var def *ServerDefinitionView
	if d, ok := t.ServerDefinition(); ok {
		def = &ServerDefinitionView{
			Description: d.Description(), InputSchema: d.InputSchema(), Annotations: objectJSON(d.Annotations()),
			Findings: newFindingsJSON(f.Stored(s, d)),
		}
	}
	return ToolSnapshotView{
		toolJSON: toolJSON{
			Name:         t.Name(),
			Description:  t.Description(),
			InputSchema:  t.InputSchema(),
			Annotations:  objectJSON(t.Annotations()),
			WriteCapable: t.WriteCapable(),
			Hash:         t.Hash(),
		},
		ApprovedAt:       timeJSON(t.ApprovedAt()),
		State:            string(s.ToolStatus(t.Name()).State),
		ServerDefinition: def,
	}
}

// objectJSON writes absent annotations as {} so clients always get an object.
func objectJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	return raw
}

func timeJSON(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

type serverListJSON struct {
	Servers []ServerView `json:"servers"`
}

// serverAuthRequest is the auth object. The lengths repeat
// limits.MaxCredentialLen (tags cannot name constants; a test keeps them
// equal); the domain checks everything again.
type serverAuthRequest struct {
	Type         string   `json:"type" validate:"required,oneof=none bearer header oauth_client_credentials oauth_authorization_code"`
	Token        string   `json:"token" validate:"max=4096"`
	Name         string   `json:"name" validate:"max=64"`
	Value        string   `json:"value" validate:"max=4096"`
	TokenURL     string   `json:"tokenUrl" validate:"max=2048"`
	ClientID     string   `json:"clientId" validate:"max=256"`
	ClientSecret string   `json:"clientSecret" validate:"max=4096"`
	Issuer       string   `json:"issuer" validate:"max=2048"`
	ClientAuth   string   `json:"clientAuth" validate:"max=32"`
	Scopes       []string `json:"scopes" validate:"omitnil,max=20,dive,max=128"`
}

func (a *serverAuthRequest) auth() *registry.ServerAuth {
	if a == nil {
		return nil
	}
	return &registry.ServerAuth{Type: a.Type, Token: a.Token, Name: a.Name, Value: a.Value,
		TokenURL: a.TokenURL, ClientID: a.ClientID, ClientSecret: a.ClientSecret, Issuer: a.Issuer, ClientAuth: a.ClientAuth, Scopes: a.Scopes}
}

// createServerRequest is the body of POST /v1/mcp/servers. There is no
// command, stdio or transport field: the strict decoder refuses them as
// unknown (MC11).
type createServerRequest struct {
	Name         string             `json:"name" validate:"required,max=24"`
	URL          string             `json:"url" validate:"required,max=2048"`
	Auth         *serverAuthRequest `json:"auth" validate:"required"`
	Acknowledged bool               `json:"acknowledged"`
	// MaxCallsPerMinute is 1 to the instance's cap; absent or null for
	// no limit. The domain checks the range.
	MaxCallsPerMinute *int `json:"maxCallsPerMinute"`
}

// patchServerRequest is the body of PATCH /v1/mcp/servers/{id}; absent
// (or null) fields stay as they are, except maxCallsPerMinute, whose null
// removes the limit: it is kept raw to tell null from absent.
type patchServerRequest struct {
	Name              *string            `json:"name" validate:"omitnil,max=24"`
	URL               *string            `json:"url" validate:"omitnil,max=2048"`
	Auth              *serverAuthRequest `json:"auth"`
	Acknowledged      *bool              `json:"acknowledged"`
	Enabled           *bool              `json:"enabled"`
	MaxCallsPerMinute jsontext.Value     `json:"maxCallsPerMinute"`
}

// callLimit reads maxCallsPerMinute of a patch: nil when absent, a
// change to no limit for null, else the number (bad_json when it is
// not an integer, like any other wrong type).
func (req patchServerRequest) callLimit() (*registry.CallLimitChange, error) {
	if req.MaxCallsPerMinute == nil {
		return nil, nil
	}
	var n *int
	if err := jsonv2.Unmarshal(req.MaxCallsPerMinute, &n); err != nil {
		return nil, app.Fail(app.CodeBadJSON, "the body is not valid JSON for this request")
	}
	return &registry.CallLimitChange{PerMinute: n}, nil
}

func (g *ServerRoutes) register(rt *router) {
	rt.gated("POST /v1/mcp/servers", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		var req createServerRequest
		if err := rt.decode(r, &req, 0); err != nil {
			return 0, nil, err
		}
		s, err := g.create.Handle(r.Context(), p, registry.CreateServer{
			Name: req.Name, URL: req.URL, Auth: *req.Auth.auth(), Acknowledged: req.Acknowledged,
			MaxCallsPerMinute: req.MaxCallsPerMinute,
		})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusCreated, NewServerView(s, g.findings, g.allowed), nil
	})
	rt.handle("GET /v1/mcp/servers", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		list, err := g.list.Handle(r.Context(), p, registry.ListServers{})
		if err != nil {
			return 0, nil, err
		}
		out := serverListJSON{Servers: make([]ServerView, 0, len(list))}
		for _, s := range list {
			out.Servers = append(out.Servers, NewServerView(s, g.findings, g.allowed))
		}
		return http.StatusOK, out, nil
	})
	rt.handle("GET /v1/mcp/servers/{id}", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		s, err := g.get.Handle(r.Context(), p, registry.GetServer{ID: r.PathValue("id")})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, NewServerView(s, g.findings, g.allowed), nil
	})
	rt.gated("PATCH /v1/mcp/servers/{id}", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		var req patchServerRequest
		if err := rt.decode(r, &req, 0); err != nil {
			return 0, nil, err
		}
		limit, err := req.callLimit()
		if err != nil {
			return 0, nil, err
		}
		s, err := g.patch.Handle(r.Context(), p, registry.PatchServer{
			ID: r.PathValue("id"), Name: req.Name, URL: req.URL, Auth: req.Auth.auth(),
			Acknowledged: req.Acknowledged, Enabled: req.Enabled, MaxCallsPerMinute: limit,
		})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, NewServerView(s, g.findings, g.allowed), nil
	})
	rt.handle("DELETE /v1/mcp/servers/{id}", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		if err := g.del.Handle(r.Context(), p, registry.DeleteServer{ID: r.PathValue("id")}); err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, nil
	})
}
