package reviews_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/review"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

// promptCanary is an AWS key id the stand-in scanner redacts.
const promptCanary = "AKIAZZZZCANARY123456"

// promptEnv is a review environment whose tenant has the given settings
// and keeps its prompt logs in memory.
func promptEnv(t *testing.T, st settings.Settings) (*reviewEnv, *portfake.StoredSettings, *portfake.PromptLogs) {
	t.Helper()
	e := newReviewEnv(t, 5)
	fs, logs := &portfake.StoredSettings{Value: st}, &portfake.PromptLogs{}
	e.tenants.NewTx = func(string) *portfake.Tx {
		return &portfake.Tx{ServerRepo: e.servers, RepositoryRepo: e.repos, PolicyRepo: e.policies, ReviewRepo: e.reviews, CallLog: e.calls, SettingsRepo: fs, PromptLogRepo: logs}
	}
	e.reviews.Runs[revReview] = queuedRun(t, "Deploy key "+promptCanary)
	e.finderCalls(`{"query": "cache"}`)
	return e, fs, logs
}

func debugOn(t *testing.T, ttlHours int) settings.Settings {
	t.Helper()
	s, err := settings.New(30, true, ttlHours)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPromptLogsKeepEveryModelRequestRedactedAndSealed(t *testing.T) {
	e, _, logs := promptEnv(t, debugOn(t, 2))
	if run := e.run(t); run.Status() != review.Done {
		t.Fatalf("run %s", run.Status())
	}
	var steps []string
	for _, l := range logs.Logs {
		steps = append(steps, fmt.Sprintf("%s%d", l.Step, l.Turn))
		if !strings.HasPrefix(string(l.Sealed), "k1|prompt_logs:"+revReview+"|") {
			t.Errorf("log %s%d is not sealed under prompt_logs:<review id>: %.40q", l.Step, l.Turn, l.Sealed)
		}
		plain, _ := hex.DecodeString(strings.SplitN(string(l.Sealed), "|", 3)[2])
		if strings.Contains(string(l.Sealed), promptCanary) || strings.Contains(string(plain), promptCanary) {
			t.Errorf("log %s%d holds the secret", l.Step, l.Turn)
		}
		if want := l.CreatedAt.Add(2 * time.Hour); !l.ExpiresAt.Equal(want) {
			t.Errorf("log %s%d expires %v, want %v (written + ttlHours)", l.Step, l.Turn, l.ExpiresAt, want)
		}
	}
	if want := []string{"finder1", "finder2", "verifier1", "summary1"}; !slices.Equal(steps, want) {
		t.Fatalf("logs %v, want one per model request %v", steps, want)
	}

	prompts, err := reviews.NewListPromptsHandler(reviews.Deps{Tenants: e.tenants, Cipher: e.deps.Cipher, Clock: e.deps.Clock}).Handle(context.Background(), admin(), reviews.ListPrompts{ReviewID: revReview})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	finder2 := prompts[1].Messages
	var roles []string
	for _, m := range finder2 {
		roles = append(roles, m.Role)
	}
	if want := []string{"system", "user", "assistant", "tool", "assistant"}; !slices.Equal(roles, want) {
		t.Fatalf("finder turn 2 roles %v, want %v", roles, want)
	}
	if !strings.Contains(finder2[1].Content, "[REDACTED:aws-access-token]") || strings.Contains(finder2[1].Content, "alice@example.com") {
		t.Errorf("user message not redacted: %q", finder2[1].Content)
	}
	if !strings.Contains(finder2[2].Content, `tool call c0 mcp_wiki_search {"query": "cache"}`) {
		t.Errorf("assistant tool call not kept: %q", finder2[2].Content)
	}
	if !strings.Contains(finder2[3].Content, `<untrusted source="mcp:wiki/search"`) || !strings.Contains(finder2[3].Content, "ADR-7") {
		t.Errorf("the finder's MCP result is not kept as wrapped: %q", finder2[3].Content)
	}
	if !strings.Contains(finder2[4].Content, "Unbounded cache") {
		t.Errorf("the model's answer is not kept: %q", finder2[4].Content)
	}

	// Another review's associated data does not open them.
	other := &portfake.Tenants{NewTx: func(string) *portfake.Tx {
		moved := &portfake.PromptLogs{}
		for _, l := range logs.Logs {
			l.ReviewID = "77777777-0000-4000-8000-000000000002"
			moved.Logs = append(moved.Logs, l)
		}
		return &portfake.Tx{ReviewRepo: e.reviews, PromptLogRepo: moved}
	}}
	moved, err := review.NewRun("77777777-0000-4000-8000-000000000002", revRepo, review.Request{Title: "t", Diff: "+"}, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	e.reviews.Runs[moved.ID()] = moved
	if _, err := reviews.NewListPromptsHandler(reviews.Deps{Tenants: other, Cipher: e.deps.Cipher, Clock: e.deps.Clock}).Handle(context.Background(), admin(), reviews.ListPrompts{ReviewID: "77777777-0000-4000-8000-000000000002"}); app.AsError(err).Code != app.CodeKeysUnavailable {
		t.Errorf("logs moved to another review opened: %v", err)
	}
}

func admin() ports.Principal {
	return ports.Principal{TokenID: "t1", TenantID: revTenant, Permissions: []string{app.PermTenantManage}}
}

func TestPromptLogsAreNotKeptWhileOff(t *testing.T) {
	e, _, logs := promptEnv(t, settings.Default())
	e.run(t)
	if len(logs.Logs) != 0 {
		t.Errorf("debug prompts off kept %d logs", len(logs.Logs))
	}
}

// The setting is read when each log is written: turned off during the
// run, nothing more is written.
func TestPromptLogsStopWhenTurnedOffDuringTheRun(t *testing.T) {
	e, fs, logs := promptEnv(t, debugOn(t, 24))
	var n atomic.Int32
	e.deps.Model = modelFunc(func(ctx context.Context, req ports.ModelRequest) (ports.ModelResponse, error) {
		if n.Add(1) == 2 {
			fs.Value = settings.Default() // the admin turns it off while turn 2 runs
		}
		return e.model.Complete(ctx, req)
	})
	e.run(t)
	if len(logs.Logs) != 1 {
		t.Errorf("kept %d logs, want only the one written before the setting was turned off", len(logs.Logs))
	}
}

type modelFunc func(context.Context, ports.ModelRequest) (ports.ModelResponse, error)

func (f modelFunc) Complete(ctx context.Context, req ports.ModelRequest) (ports.ModelResponse, error) {
	return f(ctx, req)
}

// Without a key ring nothing is written (never plaintext), the review
// still finishes and the warning carries nothing of the prompt.
func TestPromptLogsWithoutKeysAreNotWritten(t *testing.T) {
	e, _, logs := promptEnv(t, debugOn(t, 24))
	var warnings []string
	e.deps.Warn = func(msg string, fields map[string]string) { warnings = append(warnings, fmt.Sprint(msg, fields)) }
	e.deps.Cipher = app.NewVault(&portfake.Cipher{Keys: nil})
	if run := e.run(t); run.Status() != review.Done {
		t.Fatalf("run %s, want done", run.Status())
	}
	if len(logs.Logs) != 0 {
		t.Errorf("kept %d logs without a key ring", len(logs.Logs))
	}
	joined := strings.Join(warnings, "\n")
	if !strings.Contains(joined, "debug prompt log not written") || strings.Contains(joined, "Add a cache") || strings.Contains(joined, "cache :=") {
		t.Errorf("warnings %q", joined)
	}
}

func TestPromptLogsAreReadOnlyForReviewsOfTheTenantAndUntilTheyExpire(t *testing.T) {
	e, _, _ := promptEnv(t, debugOn(t, 1))
	e.run(t)
	clock := e.deps.Clock.(*portfake.Clock)
	h := reviews.NewListPromptsHandler(reviews.Deps{Tenants: e.tenants, Cipher: e.deps.Cipher, Clock: clock})
	for _, id := range []string{"not-a-uuid", "77777777-0000-4000-8000-000000000009"} {
		if _, err := h.Handle(context.Background(), admin(), reviews.ListPrompts{ReviewID: id}); app.AsError(err).Code != app.CodeNotFound {
			t.Errorf("List(%q) = %v, want not_found", id, err)
		}
	}
	clock.At = clock.At.Add(time.Hour - time.Microsecond)
	if got, err := h.Handle(context.Background(), admin(), reviews.ListPrompts{ReviewID: revReview}); err != nil || len(got) != 4 {
		t.Fatalf("before the TTL: %d prompts, %v", len(got), err)
	}
	clock.At = clock.At.Add(time.Microsecond)
	if got, err := h.Handle(context.Background(), admin(), reviews.ListPrompts{ReviewID: revReview}); err != nil || len(got) != 0 {
		t.Errorf("at the TTL: %d prompts, %v; want none", len(got), err)
	}
}

// flipScanner turns the tenant's setting off when it first redacts a
// model request (the finder's prompt), that is after the recorder found
// the setting on and before it writes; the run's scans of its own request
// (for the egress taint) leave it on.
type flipScanner struct {
	regexScanner
	once sync.Once
	off  func()
}

func (f *flipScanner) Scan(s string) []ports.SecretFinding {
	if strings.HasPrefix(s, reviews.FinderPrompt(true)) {
		f.once.Do(f.off)
	}
	return f.regexScanner.Scan(s)
}

func TestPromptLogsRecheckTheSettingWhenTheyWrite(t *testing.T) {
	e, fs, logs := promptEnv(t, debugOn(t, 24))
	e.deps.Scanner = &flipScanner{off: func() { fs.Value = settings.Default() }}
	e.run(t)
	if len(logs.Logs) != 0 {
		t.Errorf("kept %d logs after the setting was turned off during the redaction", len(logs.Logs))
	}
}
