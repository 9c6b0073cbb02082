package registry

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/poison"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
)

// DiscoveryDeps are the ports discovery and the allowlist save need.
type DiscoveryDeps struct {
	Tenants   ports.Tenants
	Cipher    app.Vault
	Connector ports.MCPConnector
	Clock     ports.Clock
	Gates     app.Gates
	Findings  *Findings
	// Allowed is the operator's allowlist of server URLs
	// (QUAVON_MCP_ALLOWED_URLS): a stored server outside it is neither
	// claimed nor contacted. The zero value allows any URL.
	Allowed server.AllowedURLs
}

// Audit actions of discovery and the allowlist.
const (
	ActionServerDiscover = "server.discover"
	ActionServerTools    = "server.tools"
)

// remoteFailure is a failed discovery: the API's code and the precise
// code recorded as the server's lastError.
func remoteFailure(err error) (apiErr *app.Error, lastError string) {
	code, lastError := app.RemoteFailure(err)
	return &app.Error{Code: code, Message: "discovery failed: " + string(code), Cause: err}, lastError
}

// claimDiscovery takes the server's discovery claim in the database
// (ports.ServerRepo.ClaimDiscovery): at most one live listing per
// limits.DiscoveryInterval and server, discovery and connection test
// together, across replicas (a discovery's claim is the server's
// lastDiscoveryAt, a test's is not). Refused, it is discovery_throttled
// with the time to wait.
//
// A server outside the operator's allowlist is refused before its claim
// (validation_failed on url), so nothing is written for it.
func (d DiscoveryDeps) claimDiscovery(ctx context.Context, tenantID, id string, l ports.Listing) error {
	return d.claim(ctx, tenantID, limits.DiscoveryInterval, "this server was discovered or tested less than 10 s ago",
		func(ctx context.Context, r ports.ServerRepo) (bool, time.Duration, error) {
			if d.Allowed.Len() > 0 {
				s, err := r.Get(ctx, id)
				if err != nil {
					return false, 0, err
				}
				if err := d.Allowed.Check(s.URL()); err != nil {
					return false, 0, srvDomainError(err)
				}
			}
			return r.ClaimDiscovery(ctx, id, limits.DiscoveryInterval, l)
		})
}

// claimConnectionTest counts a connection test of an unsaved server
// against the tenant's limit (limits.MaxConnectionTests per
// limits.ConnectionTestWindow, in the database, across replicas).
// Refused, it is discovery_throttled with the time to wait.
func (d DiscoveryDeps) claimConnectionTest(ctx context.Context, tenantID string) error {
	return d.claim(ctx, tenantID, limits.ConnectionTestWindow, "the tenant tested 6 unsaved servers in the last minute",
		func(ctx context.Context, r ports.ServerRepo) (bool, time.Duration, error) {
			return r.ClaimConnectionTest(ctx, limits.MaxConnectionTests, limits.ConnectionTestWindow)
		})
}

// claim takes one of the tenant's throttling claims in its own
// transaction; refused, it is discovery_throttled with msg and the time
// to wait (window when the store names none).
func (d DiscoveryDeps) claim(ctx context.Context, tenantID string, window time.Duration, msg string,
	take func(context.Context, ports.ServerRepo) (bool, time.Duration, error)) error {
	var (
		claimed    bool
		retryAfter = window
	)
	err := d.Tenants.InTenant(ctx, tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		claimed, retryAfter, err = take(ctx, tx.Servers())
		return err
	})
	if err != nil {
		return srvStoreError(err)
	}
	if !claimed {
		return throttled(msg, retryAfter)
	}
	return nil
}

// throttled is discovery_throttled with a Retry-After of at least a
// second.
func throttled(msg string, retryAfter time.Duration) error {
	return &app.Error{Code: app.CodeDiscoveryThrottled, Message: msg, RetryAfter: max(retryAfter, time.Second)}
}

// target reads a server and opens its credential inside the tenant; the
// plaintext lives only in the returned value, for one connection. A
// server whose URL the operator's allowlist does not allow is refused
// (validation_failed on url) before its credential is opened: every
// discovery, connection test, allowlist save and approval builds its
// target here.
func (d DiscoveryDeps) target(ctx context.Context, tenantID, id string) (*server.Server, ports.MCPTarget, error) {
	var (
		s   *server.Server
		enc []byte
	)
	err := d.Tenants.InTenant(ctx, tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		if s, err = tx.Servers().Get(ctx, id); err != nil {
			return err
		}
		enc, err = tx.Servers().Credential(ctx, id)
		return err
	})
	if err != nil {
		return nil, ports.MCPTarget{}, srvStoreError(err)
	}
	if err := d.Allowed.Check(s.URL()); err != nil {
		return nil, ports.MCPTarget{}, srvDomainError(err)
	}
	cred, err := app.OpenCredential(d.Cipher, s.ID(), enc)
	if err != nil {
		return nil, ports.MCPTarget{}, app.KeysUnavailable(err)
	}
	return s, app.Target(d.Tenants, d.Cipher, tenantID, s, cred, enc), nil
}

// listLive connects with the discovery cap and lists the tools. A failure
// is recorded on the server (lastError, audited with failDetails) and
// returned as the API's fixed code.
func (d DiscoveryDeps) listLive(ctx context.Context, p ports.Principal, id string, t ports.MCPTarget, failDetails map[string]any) ([]ports.ListedTool, error) {
	var ttl time.Duration
	listed, err := func() ([]ports.ListedTool, error) {
		sess, err := d.Connector.Open(ctx, t, limits.DiscoveryResponseCap)
		if err != nil {
			return nil, err
		}
		defer sess.Close()
		listed, err := sess.ListTools(ctx)
		ttl = sess.ListTTL()
		return listed, err
	}()
	if err == nil {
		// The hint paces the recheck between reviews (RecheckEvery).
		err := d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
			return tx.Servers().RecordListTTL(ctx, id, ttl)
		})
		if err != nil {
			return nil, srvStoreError(err)
		}
		return listed, nil
	}
	apiErr, lastError := remoteFailure(err)
	if err := d.record(ctx, p, id, lastError, failDetails); err != nil {
		return nil, srvStoreError(err)
	}
	return nil, apiErr
}

// record stores the outcome of a live discovery on the server (lastError,
// empty on success) and audits it.
func (d DiscoveryDeps) record(ctx context.Context, p ports.Principal, id, lastError string, details map[string]any) error {
	return d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		// Only lastError: lastDiscoveryAt is written by the claim alone, by
		// the database's clock, so no replica's clock can reopen the window.
		_, err := tx.Servers().Update(ctx, id, func(s *server.Server) (ports.CredentialUpdate, error) {
			s.RecordError(lastError)
			return ports.CredentialUpdate{}, nil
		})
		if err != nil {
			return err
		}
		details["lastError"] = nullable(lastError)
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionServerDiscover, Actor: app.Actor(p), Target: id, At: d.Clock.Now(), Details: details,
		})
	})
}

// liveTools is a listing as the domain observes it.
func liveTools(defs []ports.ListedTool) []server.LiveTool {
	out := make([]server.LiveTool, len(defs))
	for i, lt := range defs {
		out[i] = server.LiveTool{Name: lt.Name, Definition: lt.Definition, Readable: lt.Err == nil}
	}
	return out
}

// toolChangedError is the lastError of a server with a changed tool
// (the review's tool_changed).
const toolChangedError = "tool_changed"

// settleLastError keeps the lastError tool_changed exactly while a tool
// is changed: a successful listing does not erase the warning, and the
// approval or removal of the last changed tool clears it. Any other
// lastError stays.
func settleLastError(s *server.Server) {
	switch {
	case len(s.ChangedTools()) > 0:
		s.RecordError(toolChangedError)
	case s.LastError() == toolChangedError:
		s.RecordError("")
	}
}

// recordListing stores a successful live listing on the server: each
// allowlisted tool's state (a changed tool stays changed), the listed
// names, and lastError (tool_changed while a tool is changed, else
// empty); it audits the discovery with the tools that turned changed.
func (d DiscoveryDeps) recordListing(ctx context.Context, p ports.Principal, id string, defs []ports.ListedTool, details map[string]any) error {
	return d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var changed []string
		s, err := tx.Servers().Update(ctx, id, func(s *server.Server) (ports.CredentialUpdate, error) {
			changed = s.ObserveTools(liveTools(defs))
			s.RecordError("")
			settleLastError(s)
			return ports.CredentialUpdate{}, nil
		})
		if err != nil {
			return err
		}
		details["lastError"] = nullable(s.LastError())
		if len(changed) > 0 {
			details["changed"] = changed
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionServerDiscover, Actor: app.Actor(p), Target: id, At: d.Clock.Now(), Details: details,
		})
	})
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// DiscoveredTool is one live tool and the verdict on it, as discovery
// lists it: the server's own name, description, schema and annotations
// (for the admin to review), whether it can be allowlisted and why not,
// what the admin should know before allowlisting it (a warning, "" when
// none), whether it may write, its pinning hash ("" when the definition
// could not be read at all), and the findings of the poisoning rules
// (MC4) the admin must confirm before allowlisting it.
type DiscoveredTool struct {
	Name         string
	Description  string
	InputSchema  json.RawMessage
	Annotations  json.RawMessage
	Supported    bool
	Reason       string
	Warning      string
	WriteCapable bool
	Hash         string
	Findings     []poison.Finding
}

// assess applies the domain's rules to a listed tool of s. A tool whose
// definition could not be read is unsupported and, knowing nothing of
// its hints, treated as write-capable.
func (d DiscoveryDeps) assess(s *server.Server, lt ports.ListedTool, sc Scope) DiscoveredTool {
	if lt.Err != nil {
		reason := "unsupported tool definition"
		var ue *tool.UnsupportedError
		if errors.As(lt.Err, &ue) {
			reason = ue.Reason
		}
		return DiscoveredTool{
			Name: lt.Name, Description: lt.Description, Reason: reason, WriteCapable: true,
			Findings: d.Findings.OfText(s, lt.Name, lt.Description, sc),
		}
	}
	a := tool.Assess(s.Name().String(), lt.Definition)
	return DiscoveredTool{
		Name: lt.Name, Description: lt.Definition.Description(),
		InputSchema: lt.Definition.InputSchema(), Annotations: lt.Definition.Annotations(),
		Supported: a.Supported, Reason: a.Reason, Warning: a.Warning, WriteCapable: a.WriteCapable, Hash: a.Hash,
		Findings: d.Findings.Of(s, lt.Definition, sc),
	}
}

// DiscoverServer lists a server's tools live (POST /v1/mcp/servers/{id}/discover).
type DiscoverServer struct {
	ID string
}

// DiscoverServerHandler runs discoveries.
type DiscoverServerHandler struct{ d DiscoveryDeps }

// NewDiscoverServerHandler returns the handler.
func NewDiscoverServerHandler(d DiscoveryDeps) *DiscoverServerHandler {
	return &DiscoverServerHandler{d: d}
}

// Handle checks the gates, claims the discovery in the database (at most
// one per limits.DiscoveryInterval per server, across replicas) before any
// network access, lists the tools through the guarded transport and
// assesses each one. The outcome is recorded on the server and audited:
// each allowlisted tool's state (pinned, changed or gone; a changed tool
// stays changed until it is approved or removed), the listed names, and
// lastError (tool_changed while a tool is changed).
func (h *DiscoverServerHandler) Handle(ctx context.Context, p ports.Principal, cmd DiscoverServer) ([]DiscoveredTool, error) {
	if err := h.d.Gates.Check(); err != nil {
		return nil, err
	}
	id, err := srvParseID(cmd.ID)
	if err != nil {
		return nil, err
	}
	if err := h.d.claimDiscovery(ctx, p.TenantID, id, ports.ListingDiscovery); err != nil {
		return nil, err
	}
	s, target, err := h.d.target(ctx, p.TenantID, id)
	if err != nil {
		return nil, err
	}
	defs, err := h.d.listLive(ctx, p, id, target, map[string]any{"tools": 0})
	if err != nil {
		return nil, err
	}
	sc, err := h.d.scope(ctx, p.TenantID, id, defs)
	if err != nil {
		return nil, err
	}
	out := make([]DiscoveredTool, len(defs))
	supported, flagged := 0, 0
	for i, lt := range defs {
		out[i] = h.d.assess(s, lt, sc)
		if out[i].Supported {
			supported++
		}
		if len(out[i].Findings) > 0 {
			flagged++
		}
	}
	if err := h.d.recordListing(ctx, p, id, defs, map[string]any{"tools": len(defs), "supported": supported, "withFindings": flagged}); err != nil {
		return nil, srvStoreError(err)
	}
	return out, nil
}
