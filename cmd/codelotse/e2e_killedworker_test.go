//go:build signedoff

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
)

// TestE2EKilledWorkerReviewIsDoneWithinAMinute: `codelotse worker` is
// killed (SIGKILL) in the middle of a review, while the model answers its
// first request; with the default settings, the review is done on a
// second `codelotse worker` within 60 s of the kill, run by one attempt
// at a time. The model is a chat-completions endpoint of the test's own
// that holds its first request until the worker's connection drops.
func TestE2EKilledWorkerReviewIsDoneWithinAMinute(t *testing.T) {
	dsn := pgtest.DSN(t)
	model := newHeldModel(t)
	env := []string{"QUAVON_LLM_PROVIDER=openai", "QUAVON_LLM_BASE_URL=" + model.URL + "/v1", "QUAVON_LLM_MODEL=held",
		"QUAVON_LLM_API_KEY=sk-e2e-killed-worker"}
	api := startCommandOn(t, "api", dsn)
	_, c := api.tenant("killed", "tenant:manage,repo:manage")
	first := startKillable(t, "worker", dsn, env...)

	r := c.do("POST", "/v1/repositories", map[string]any{"name": "acme/cache", "visibility": "private"})
	expect(t, "create repository", r, 201, "")
	r = c.do("POST", "/v1/repositories/"+str(r.Body, "id")+"/reviews", map[string]any{
		"title": "Cache writes", "description": "Adds writes to the cache.", "diff": reviewDiff, "files": map[string]string{"cache.go": reviewFile}})
	expect(t, "POST …/reviews", r, 202, "")
	id := str(r.Body, "id")
	select {
	case <-model.held:
	case <-time.After(30 * time.Second):
		t.Fatalf("the first worker did not ask the model:\n%s", first.logs.String())
	}
	if s := status(t, c, id); s != "running" {
		t.Fatalf("review %s while the model holds its request, want running", s)
	}

	second := startCommandOn(t, "worker", dsn, env...)
	// Kill once the second worker has checked the leases (at its start):
	// its next check is a full interval away, the worst case but for the
	// time a lost node's session takes to end.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(second.logs.String(), `"worker started"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the second worker did not start:\n%s", second.logs.String())
		}
	}
	time.Sleep(200 * time.Millisecond)
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	<-first.exited
	var s string
	for s = status(t, c, id); s != "done" && s != "failed" && time.Since(killed) < 75*time.Second; s = status(t, c, id) {
		time.Sleep(50 * time.Millisecond)
	}
	took := time.Since(killed)
	if s != "done" {
		t.Fatalf("review %s %v after the kill, want done:\n%s", s, took, second.logs.String())
	}
	t.Logf("SIGKILL of the first worker to the review done on the second: %v", took.Round(time.Millisecond))
	if took > 60*time.Second {
		t.Errorf("the review was done %v after its worker was killed, want under 60 s", took)
	}

	db := api.db()
	var attempt int
	if err := db.QueryRow(context.Background(), "SELECT attempt FROM river_job WHERE args ->> 'reviewId' = $1", id).Scan(&attempt); err != nil {
		t.Fatal(err)
	}
	if attempt != 2 {
		t.Errorf("the job completed at attempt %d, want 2 (the killed one and the second worker's)", attempt)
	}
	if p := model.peak.Load(); p != 1 {
		t.Errorf("%d model requests of the review were in flight at once, want 1: two attempts ran together", p)
	}
}

// heldModel is a chat-completions endpoint that holds its first request
// until the client goes away and answers every later one: the finder
// gets no findings, the summary a sentence.
type heldModel struct {
	*httptest.Server
	held     chan struct{}
	requests atomic.Int32
	inFlight atomic.Int32
	peak     atomic.Int32
}

func newHeldModel(t *testing.T) *heldModel {
	t.Helper()
	m := &heldModel{held: make(chan struct{})}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := m.inFlight.Add(1)
		defer m.inFlight.Add(-1)
		for p := m.peak.Load(); n > p && !m.peak.CompareAndSwap(p, n); p = m.peak.Load() {
		}
		var req struct {
			Tools []json.RawMessage `json:"tools"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if m.requests.Add(1) == 1 {
			close(m.held)
			select {
			case <-r.Context().Done(): // the worker was killed
			case <-time.After(2 * time.Minute):
			}
			return
		}
		content := "Nothing to report."
		if len(req.Tools) > 0 {
			content = `{"findings": []}`
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
			"message": map[string]any{"role": "assistant", "content": content}}}})
	}))
	t.Cleanup(m.Close)
	return m
}

// killable is a `codelotse <command>` process the test may kill.
type killable struct {
	cmd    *exec.Cmd
	logs   *syncBuffer
	exited chan struct{}
}

// startKillable starts `codelotse <command>` on the database dsn; it is
// killed when the test ends, if it still runs.
func startKillable(t *testing.T, command, dsn string, extraEnv ...string) *killable {
	t.Helper()
	k := &killable{cmd: exec.Command(binary, command), logs: &syncBuffer{}, exited: make(chan struct{})}
	k.cmd.Env = append(append(os.Environ(), "QUAVON_DATABASE_URL="+dsn, "QUAVON_HTTP_ADDR=127.0.0.1:0"), extraEnv...)
	k.cmd.Stderr = k.logs
	if err := k.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = k.cmd.Wait(); close(k.exited) }()
	t.Cleanup(func() {
		_ = k.cmd.Process.Kill()
		<-k.exited
	})
	return k
}

// status is the review's status.
func status(t *testing.T, c *client, id string) string {
	t.Helper()
	g := c.do("GET", "/v1/reviews/"+id, nil)
	if g.Status != http.StatusOK {
		t.Fatalf("GET /v1/reviews/%s = %d %s", id, g.Status, g.Raw)
	}
	return fmt.Sprint(g.Body["status"])
}
