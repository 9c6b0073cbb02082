package accounts_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

func settingsEnv(cipher ports.Cipher) (*accounts.PutSettingsHandler, *portfake.StoredSettings, *portfake.PromptLogs, *portfake.Audit) {
	fs, logs, audit := &portfake.StoredSettings{Value: settings.Default()}, &portfake.PromptLogs{}, &portfake.Audit{}
	tenants := &portfake.Tenants{NewTx: func(string) *portfake.Tx { return &portfake.Tx{SettingsRepo: fs, PromptLogRepo: logs, AuditLog: audit} }}
	return accounts.NewPutSettingsHandler(accounts.Deps{Tenants: tenants, Cipher: app.NewVault(cipher), Clock: &portfake.Clock{At: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}}), fs, logs, audit
}

func TestEnablingDebugPromptsNeedsTheKeyRing(t *testing.T) {
	on, ttl := true, 12
	for _, cipher := range []ports.Cipher{nil, &portfake.Cipher{}} {
		h, fs, _, audit := settingsEnv(cipher)
		_, err := h.Handle(context.Background(), admin(), accounts.PutSettings{DebugPrompts: &on, TTLHours: &ttl})
		e := app.AsError(err)
		if e.Code != app.CodeValidationFailed || !strings.Contains(e.Fields["debugPrompts.enabled"], "QUAVON_ENCRYPTION_KEYS") || len(e.Fields) != 1 {
			t.Errorf("Put without keys = %v %v, want validation_failed on debugPrompts.enabled naming the key ring", e.Code, e.Fields)
		}
		if fs.Value.DebugPrompts() || len(audit.Events) != 0 {
			t.Errorf("a refused change was stored or audited")
		}
		off := false
		if _, err := h.Handle(context.Background(), admin(), accounts.PutSettings{DebugPrompts: &off, TTLHours: &ttl}); err != nil {
			t.Errorf("debug prompts off need no key ring: %v", err)
		}
	}
}

func TestTurningDebugPromptsOffDeletesTheLogsAndIsAudited(t *testing.T) {
	h, fs, logs, audit := settingsEnv(&portfake.Cipher{Keys: []string{"k1"}})
	on, off, days := true, false, 30
	if _, err := h.Handle(context.Background(), admin(), accounts.PutSettings{RetentionDays: &days, DebugPrompts: &on}); err != nil {
		t.Fatal(err)
	}
	if !fs.Value.DebugPrompts() || fs.Value.PromptTTLHours() != 24 || fs.Value.RetentionDays() != 30 {
		t.Fatalf("stored %+v", fs.Value)
	}
	logs.Logs = []ports.PromptLog{{ReviewID: revReview}, {ReviewID: revReview}}
	if _, err := h.Handle(context.Background(), admin(), accounts.PutSettings{RetentionDays: &days, DebugPrompts: &off}); err != nil {
		t.Fatal(err)
	}
	if len(logs.Logs) != 0 {
		t.Errorf("%d prompt logs left after turning them off", len(logs.Logs))
	}
	if len(audit.Events) != 2 || audit.Events[1].Action != accounts.ActionTenantSettings || audit.Events[1].Details["promptLogsDeleted"] != int64(2) {
		t.Errorf("audit %+v", audit.Events)
	}
}
