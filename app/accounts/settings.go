package accounts

import (
	"context"
	"errors"
	"fmt"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
)

// ActionTenantSettings is the audit action of a settings change.
const ActionTenantSettings = "tenant.settings"

// PutSettings is the command of PUT /v1/tenant/settings. A nil field takes
// its default (90 days, debug prompts off, 24 hours).
type PutSettings struct {
	RetentionDays *int
	DebugPrompts  *bool
	TTLHours      *int
}

// GetSettings is the query of GET /v1/tenant/settings.
type GetSettings struct{}

// GetSettingsHandler reads the tenant's settings (tenant:manage). Safe
// for concurrent use.
type GetSettingsHandler struct{ d Deps }

// NewGetSettingsHandler returns a [GetSettingsHandler].
func NewGetSettingsHandler(d Deps) *GetSettingsHandler { return &GetSettingsHandler{d: d} }

// PutSettingsHandler changes the tenant's settings (tenant:manage). Safe
// for concurrent use.
type PutSettingsHandler struct{ d Deps }

// NewPutSettingsHandler returns a [PutSettingsHandler].
func NewPutSettingsHandler(d Deps) *PutSettingsHandler { return &PutSettingsHandler{d: d} }

// Handle returns the tenant's settings.
func (h *GetSettingsHandler) Handle(ctx context.Context, p ports.Principal, _ GetSettings) (settings.Settings, error) {
	var s settings.Settings
	err := h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		s, err = tx.Settings().Get(ctx)
		return err
	})
	return s, err
}

// Handle stores the settings and records tenant.settings with the old and
// new values. Out-of-range values are validation_failed with their
// fields. Debug prompts can be enabled only while the key ring can seal
// (validation_failed on debugPrompts.enabled otherwise): a prompt log is
// never stored in plaintext. Turning them off deletes every prompt log of
// the tenant in the same transaction.
func (h *PutSettingsHandler) Handle(ctx context.Context, p ports.Principal, cmd PutSettings) (settings.Settings, error) {
	days, debug, ttl := settings.DefaultRetentionDays, false, settings.DefaultPromptTTLHours
	if cmd.RetentionDays != nil {
		days = *cmd.RetentionDays
	}
	if cmd.DebugPrompts != nil {
		debug = *cmd.DebugPrompts
	}
	if cmd.TTLHours != nil {
		ttl = *cmd.TTLHours
	}
	next, err := settings.New(days, debug, ttl)
	fields := map[string]string{}
	for _, e := range app.Flatten(err) {
		var fe *field.Error
		if errors.As(e, &fe) {
			fields[fe.Field] = fe.Reason
		}
	}
	if debug {
		if err := h.canSeal(); err != nil {
			fields["debugPrompts.enabled"] = "cannot be enabled: " + err.Error()
		}
	}
	if len(fields) > 0 {
		return settings.Settings{}, app.Invalid(fields)
	}
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		// Locked for the change: a concurrent PUT waits here, so two
		// admins saving at once are serialised, never a deadlock.
		prev, err := tx.Settings().GetForUpdate(ctx)
		if err != nil {
			return fmt.Errorf("read settings: %w", err)
		}
		if err := tx.Settings().Put(ctx, next); err != nil {
			return fmt.Errorf("store settings: %w", err)
		}
		details := map[string]any{"settings": settingsDetails(next), "previous": settingsDetails(prev)}
		if !next.DebugPrompts() {
			n, err := tx.PromptLogs().DeleteAll(ctx)
			if err != nil {
				return fmt.Errorf("delete prompt logs: %w", err)
			}
			if n > 0 {
				details["promptLogsDeleted"] = n
			}
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionTenantSettings, Actor: app.Actor(p), Target: "tenant:" + p.TenantID, At: h.d.Clock.Now(),
			Details: details,
		})
	})
	if err != nil {
		return settings.Settings{}, err
	}
	return next, nil
}

// canSeal tells why the key ring cannot seal a prompt log, in words a
// user may see, or nil.
func (h *PutSettingsHandler) canSeal() error {
	if app.ProbeKeys(h.d.Cipher) != nil {
		return errNoKeyRing
	}
	return nil
}

var errNoKeyRing = errors.New("no encryption key is configured (QUAVON_ENCRYPTION_KEYS), and prompt logs are stored only encrypted")

// settingsDetails is what the audit keeps of settings.
func settingsDetails(s settings.Settings) map[string]any {
	return map[string]any{"retentionDays": s.RetentionDays(),
		"debugPrompts": map[string]any{"enabled": s.DebugPrompts(), "ttlHours": s.PromptTTLHours()}}
}
