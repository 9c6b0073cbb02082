package app_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
)

// promptCanary is an AWS key id the stand-in scanner redacts.
const promptCanary = "AKIAZZZZCANARY123456"

// promptEnv is a review environment whose tenant has the given settings
// and keeps its prompt logs in memory.
func promptEnv(t *testing.T, st settings.Settings) (*reviewEnv, *fakeSettings, *fakePromptLogs) {
	t.Helper()
	e := newReviewEnv(t, 5)
	fs, logs := &fakeSettings{s: st}, &fakePromptLogs{}
	e.tenants.newTx = func(string) *fakeTx {
		return &fakeTx{servers: e.servers, repos: e.repos, policies: e.policies, reviews: e.reviews, calls: e.calls, settings: fs, prompts: logs}
	}
	run := e.reviews.runs[revReview]
	run.Description = "Deploy key " + promptCanary
	e.reviews.runs[revReview] = run
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
	if run := e.run(t); run.Status != ports.ReviewDone {
		t.Fatalf("run %s", run.Status)
	}
	var steps []string
	for _, l := range logs.logs {
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

	prompts, err := app.NewPromptLogHandler(e.tenants, e.deps.Cipher, e.deps.Clock).List(context.Background(), admin(), revReview)
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
	other := &fakeTenants{newTx: func(string) *fakeTx {
		moved := &fakePromptLogs{}
		for _, l := range logs.logs {
			l.ReviewID = "77777777-0000-4000-8000-000000000002"
			moved.logs = append(moved.logs, l)
		}
		return &fakeTx{reviews: e.reviews, prompts: moved}
	}}
	e.reviews.runs["77777777-0000-4000-8000-000000000002"] = ports.ReviewRun{ID: "77777777-0000-4000-8000-000000000002"}
	if _, err := app.NewPromptLogHandler(other, e.deps.Cipher, e.deps.Clock).List(context.Background(), admin(), "77777777-0000-4000-8000-000000000002"); app.AsError(err).Code != app.CodeKeysUnavailable {
		t.Errorf("logs moved to another review opened: %v", err)
	}
}

func admin() ports.Principal {
	return ports.Principal{TokenID: "t1", TenantID: revTenant, Permissions: []string{app.PermTenantManage}}
}

func TestPromptLogsAreNotKeptWhileOff(t *testing.T) {
	e, _, logs := promptEnv(t, settings.Default())
	e.run(t)
	if len(logs.logs) != 0 {
		t.Errorf("debug prompts off kept %d logs", len(logs.logs))
	}
}

// The setting is read when each log is written: turned off during the
// run, nothing more is written.
func TestPromptLogsStopWhenTurnedOffDuringTheRun(t *testing.T) {
	e, fs, logs := promptEnv(t, debugOn(t, 24))
	var n atomic.Int32
	e.deps.Model = modelFunc(func(ctx context.Context, req ports.ModelRequest) (ports.ModelResponse, error) {
		if n.Add(1) == 2 {
			fs.s = settings.Default() // the admin turns it off while turn 2 runs
		}
		return e.model.Complete(ctx, req)
	})
	e.run(t)
	if len(logs.logs) != 1 {
		t.Errorf("kept %d logs, want only the one written before the setting was turned off", len(logs.logs))
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
	e.deps.Cipher = &fakeCipher{keys: nil}
	if run := e.run(t); run.Status != ports.ReviewDone {
		t.Fatalf("run %s, want done", run.Status)
	}
	if len(logs.logs) != 0 {
		t.Errorf("kept %d logs without a key ring", len(logs.logs))
	}
	joined := strings.Join(warnings, "\n")
	if !strings.Contains(joined, "debug prompt log not written") || strings.Contains(joined, "Add a cache") || strings.Contains(joined, "cache :=") {
		t.Errorf("warnings %q", joined)
	}
}

func TestPromptLogsAreReadOnlyForReviewsOfTheTenantAndUntilTheyExpire(t *testing.T) {
	e, _, _ := promptEnv(t, debugOn(t, 1))
	e.run(t)
	clock := e.deps.Clock.(*fixedClock)
	h := app.NewPromptLogHandler(e.tenants, e.deps.Cipher, clock)
	for _, id := range []string{"not-a-uuid", "77777777-0000-4000-8000-000000000009"} {
		if _, err := h.List(context.Background(), admin(), id); app.AsError(err).Code != app.CodeNotFound {
			t.Errorf("List(%q) = %v, want not_found", id, err)
		}
	}
	clock.now = clock.now.Add(time.Hour - time.Microsecond)
	if got, err := h.List(context.Background(), admin(), revReview); err != nil || len(got) != 4 {
		t.Fatalf("before the TTL: %d prompts, %v", len(got), err)
	}
	clock.now = clock.now.Add(time.Microsecond)
	if got, err := h.List(context.Background(), admin(), revReview); err != nil || len(got) != 0 {
		t.Errorf("at the TTL: %d prompts, %v; want none", len(got), err)
	}
}

func settingsEnv(cipher ports.Cipher) (*app.SettingsHandler, *fakeSettings, *fakePromptLogs, *fakeAudit) {
	fs, logs, audit := &fakeSettings{s: settings.Default()}, &fakePromptLogs{}, &fakeAudit{}
	tenants := &fakeTenants{newTx: func(string) *fakeTx { return &fakeTx{settings: fs, prompts: logs, audit: audit} }}
	return app.NewSettingsHandler(tenants, cipher, &fixedClock{now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}), fs, logs, audit
}

func TestEnablingDebugPromptsNeedsTheKeyRing(t *testing.T) {
	on, ttl := true, 12
	for _, cipher := range []ports.Cipher{nil, &fakeCipher{}} {
		h, fs, _, audit := settingsEnv(cipher)
		_, err := h.Put(context.Background(), admin(), app.PutSettings{DebugPrompts: &on, TTLHours: &ttl})
		e := app.AsError(err)
		if e.Code != app.CodeValidationFailed || !strings.Contains(e.Fields["debugPrompts.enabled"], "QUAVON_ENCRYPTION_KEYS") || len(e.Fields) != 1 {
			t.Errorf("Put without keys = %v %v, want validation_failed on debugPrompts.enabled naming the key ring", e.Code, e.Fields)
		}
		if fs.s.DebugPrompts() || len(audit.events) != 0 {
			t.Errorf("a refused change was stored or audited")
		}
		off := false
		if _, err := h.Put(context.Background(), admin(), app.PutSettings{DebugPrompts: &off, TTLHours: &ttl}); err != nil {
			t.Errorf("debug prompts off need no key ring: %v", err)
		}
	}
}

func TestTurningDebugPromptsOffDeletesTheLogsAndIsAudited(t *testing.T) {
	h, fs, logs, audit := settingsEnv(&fakeCipher{keys: []string{"k1"}})
	on, off, days := true, false, 30
	if _, err := h.Put(context.Background(), admin(), app.PutSettings{RetentionDays: &days, DebugPrompts: &on}); err != nil {
		t.Fatal(err)
	}
	if !fs.s.DebugPrompts() || fs.s.PromptTTLHours() != 24 || fs.s.RetentionDays() != 30 {
		t.Fatalf("stored %+v", fs.s)
	}
	logs.logs = []ports.PromptLog{{ReviewID: revReview}, {ReviewID: revReview}}
	if _, err := h.Put(context.Background(), admin(), app.PutSettings{RetentionDays: &days, DebugPrompts: &off}); err != nil {
		t.Fatal(err)
	}
	if len(logs.logs) != 0 {
		t.Errorf("%d prompt logs left after turning them off", len(logs.logs))
	}
	if len(audit.events) != 2 || audit.events[1].Action != app.ActionTenantSettings || audit.events[1].Details["promptLogsDeleted"] != int64(2) {
		t.Errorf("audit %+v", audit.events)
	}
}

func TestListRepositoriesAnswersMcpActiveLikeThePolicy(t *testing.T) {
	const (
		rOn, rPublic, rInherit, rGone, rOff = "10000000-0000-4000-8000-000000000001", "10000000-0000-4000-8000-000000000002",
			"10000000-0000-4000-8000-000000000003", "10000000-0000-4000-8000-000000000004", "10000000-0000-4000-8000-000000000005"
		server, deleted = "51515151-0000-4000-8000-000000000001", "51515151-0000-4000-8000-000000000002"
	)
	section := func(mode string, servers ...string) policy.McpSection {
		s, err := policy.NewMcpSection(mode, servers, nil)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	repo := func(id, name string, v policy.Visibility) ports.Repository {
		return ports.Repository{ID: id, Name: name, Visibility: v}
	}
	repos := &fakeRepos{byID: map[string]ports.Repository{
		rOn: repo(rOn, "a/on", policy.VisibilityPrivate), rPublic: repo(rPublic, "b/public", policy.VisibilityPublic),
		rInherit: repo(rInherit, "c/inherit", policy.VisibilityInternal), rGone: repo(rGone, "d/gone", policy.VisibilityPrivate),
		rOff: repo(rOff, "e/off", policy.VisibilityPrivate),
	}}
	def := section("on", server)
	pols := &fakePolicies{def: &def, servers: map[string]bool{server: true}, repos: map[string]policy.McpSection{
		rOn: section("on", server), rPublic: section("on", server), rGone: section("on", deleted), rOff: section("off"),
	}}
	tenants := &fakeTenants{newTx: func(string) *fakeTx { return &fakeTx{repos: repos, policies: pols} }}
	open := app.Gates{SignedOff: true, Instance: gate.InstanceAllowed, Edition: gate.SelfHosted}
	list := func(g app.Gates, q app.ListRepositories) string {
		items, err := app.NewRepositoryLister(tenants, g).List(context.Background(), admin(), q)
		if err != nil {
			t.Fatalf("List(%+v) = %v", q, err)
		}
		var out []string
		for _, it := range items {
			out = append(out, fmt.Sprintf("%s=%v", it.Name, it.McpActive))
		}
		return strings.Join(out, " ")
	}
	if got, want := list(open, app.ListRepositories{Limit: 10}), "a/on=true b/public=false c/inherit=true d/gone=false e/off=false"; got != want {
		t.Errorf("List = %s, want %s", got, want)
	}
	if got, want := list(open, app.ListRepositories{Limit: 2, After: "b/public"}), "c/inherit=true d/gone=false"; got != want {
		t.Errorf("page after b/public = %s, want %s", got, want)
	}
	asked := len(pols.asked)
	closed := app.Gates{SignedOff: true, Instance: gate.InstanceDisabled, Edition: gate.SelfHosted}
	if got, want := list(closed, app.ListRepositories{Limit: 10}), "a/on=false b/public=false c/inherit=false d/gone=false e/off=false"; got != want {
		t.Errorf("instance disabled: %s, want %s", got, want)
	}
	if len(pols.asked) != asked {
		t.Error("closed gates still read the policies")
	}
	for _, q := range []app.ListRepositories{{Limit: 0}, {Limit: 201}, {Limit: 5, After: strings.Repeat("x", 201)}} {
		if _, err := app.NewRepositoryLister(tenants, open).List(context.Background(), admin(), q); app.AsError(err).Code != app.CodeValidationFailed {
			t.Errorf("List(limit %d, after %d chars) = %v, want validation_failed", q.Limit, len(q.After), err)
		}
	}
}

// retentionStore deletes from fake tables of n expired rows each.
type retentionStore struct {
	left  map[string]int64
	calls []string
	nows  []time.Time
	fail  string
}

func (s *retentionStore) DeleteExpired(_ context.Context, table string, now time.Time, limit int) (int64, error) {
	s.calls = append(s.calls, table)
	s.nows = append(s.nows, now)
	if table == s.fail {
		return 0, errors.New("database down")
	}
	n := min(s.left[table], int64(limit))
	s.left[table] -= n
	return n, nil
}

type retentionCounts map[string]int64

func (m retentionCounts) RetentionDeleted(table string, n int64) { m[table] += n }

func TestRetentionJobDeletesInBatchesTableAfterTable(t *testing.T) {
	store := &retentionStore{left: map[string]int64{ports.RetainPromptLogs: 3, ports.RetainToolCalls: 10, ports.RetainAuditLog: 0, ports.RetainReviews: 11}}
	metrics := retentionCounts{}
	clock := &fixedClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	job := app.NewRetentionJob(store, metrics, clock)
	job.BatchSize = 5
	got, err := job.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{ports.RetainPromptLogs: 3, ports.RetainToolCalls: 10, ports.RetainAuditLog: 0, ports.RetainReviews: 11}
	if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(map[string]int64(metrics)) != fmt.Sprint(want) {
		t.Errorf("deleted %v, metrics %v, want %v", got, metrics, want)
	}
	// A batch that comes back full asks again; a short one ends the table.
	wantCalls := []string{"prompt_logs", "mcp_tool_calls", "mcp_tool_calls", "mcp_tool_calls", "audit_events", "review_runs", "review_runs", "review_runs"}
	if !slices.Equal(store.calls, wantCalls) {
		t.Errorf("batches %v, want %v", store.calls, wantCalls)
	}
	for _, now := range store.nows {
		if !now.Equal(clock.now) {
			t.Errorf("a batch judged by %v, want the run's %v", now, clock.now)
		}
	}

	store = &retentionStore{left: map[string]int64{ports.RetainPromptLogs: 2}, fail: ports.RetainToolCalls}
	metrics = retentionCounts{}
	got, err = app.NewRetentionJob(store, metrics, clock).Run(context.Background())
	if err == nil || got[ports.RetainPromptLogs] != 2 || metrics[ports.RetainPromptLogs] != 2 || slices.Contains(store.calls, ports.RetainReviews) {
		t.Errorf("failing store: %v, %v, metrics %v, calls %v", got, err, metrics, store.calls)
	}
}

// fakePromptRotator is an in-memory ports.PromptLogRotator.
type fakePromptRotator struct{ logs []ports.SealedPromptLog }

func (f *fakePromptRotator) Batch(_ context.Context, after string, limit int) ([]ports.SealedPromptLog, error) {
	var out []ports.SealedPromptLog
	for _, l := range f.logs {
		if l.ID > after && len(out) < limit {
			out = append(out, l)
		}
	}
	return out, nil
}

func (f *fakePromptRotator) Replace(_ context.Context, id string, old, sealed []byte) (bool, error) {
	for i, l := range f.logs {
		if l.ID == id && string(l.Sealed) == string(old) {
			f.logs[i].Sealed = sealed
			return true, nil
		}
	}
	return false, nil
}

func TestRotateKeysCoversPromptLogs(t *testing.T) {
	old := &fakeCipher{keys: []string{"k1"}}
	prompts := &fakePromptRotator{}
	for i := range 3 {
		review := fmt.Sprintf("77777777-0000-4000-8000-00000000000%d", i)
		sealed, _ := old.Seal([]byte(`{"messages":[]}`), app.PromptLogAAD(review))
		prompts.logs = append(prompts.logs, ports.SealedPromptLog{ID: fmt.Sprintf("p%d", i), ReviewID: review, Sealed: sealed})
	}
	prompts.logs[2].ReviewID = "77777777-0000-4000-8000-000000000009" // moved to another review
	cipher := &fakeCipher{keys: []string{"k2", "k1"}}
	res, err := app.NewRotateKeysHandler(&fakeRotator{creds: map[string][]byte{}}, prompts, cipher).Handle(context.Background(), app.RotateKeys{BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.PromptLogs.Rotated != 2 || res.PromptLogs.Failed != 1 || !slices.Equal(res.PromptLogs.FailedIDs, []string{"p2"}) {
		t.Errorf("prompt logs %+v, want 2 rotated and p2 failed", res.PromptLogs)
	}
	for _, l := range prompts.logs[:2] {
		if !cipher.IsPrimary(l.Sealed) {
			t.Errorf("log %s not under the primary key", l.ID)
		}
		if _, err := cipher.Open(l.Sealed, app.PromptLogAAD(l.ReviewID)); err != nil {
			t.Errorf("log %s: %v", l.ID, err)
		}
	}
}

// flipScanner turns the tenant's setting off the first time it scans,
// that is after the recorder found the setting on and before it writes.
type flipScanner struct {
	regexScanner
	once sync.Once
	off  func()
}

func (f *flipScanner) Scan(s string) []ports.SecretFinding {
	f.once.Do(f.off)
	return f.regexScanner.Scan(s)
}

func TestPromptLogsRecheckTheSettingWhenTheyWrite(t *testing.T) {
	e, fs, logs := promptEnv(t, debugOn(t, 24))
	e.deps.Scanner = &flipScanner{off: func() { fs.s = settings.Default() }}
	e.run(t)
	if len(logs.logs) != 0 {
		t.Errorf("kept %d logs after the setting was turned off during the redaction", len(logs.logs))
	}
}
