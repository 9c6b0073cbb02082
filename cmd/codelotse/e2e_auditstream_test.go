//go:build signedoff

package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2/event"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// sink is an audit webhook receiver as an operator would write one: it
// verifies every delivery with the Standard Webhooks library and decodes
// it with the CloudEvents SDK. While down it answers in turn 503, a
// redirect and, for one request in three, nothing until the sender
// gives up.
type sink struct {
	verifier *standardwebhooks.Webhook
	up       atomic.Bool
	mu       sync.Mutex
	events   []cloudevents.Event // accepted, in arrival order, duplicates kept
	refused  int                 // deliveries the library refused
	down     int                 // deliveries answered while down
	followed atomic.Int32        // requests to the redirect's target
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/elsewhere" {
		s.followed.Add(1)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "short body", http.StatusBadRequest)
		return
	}
	if err := s.verifier.Verify(body, r.Header); err != nil {
		s.mu.Lock()
		s.refused++
		s.mu.Unlock()
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if !s.up.Load() {
		s.mu.Lock()
		s.down++
		n := s.down
		s.mu.Unlock()
		switch n % 3 {
		case 0:
			http.Error(w, "down", http.StatusServiceUnavailable)
		case 1:
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		default:
			select { // slower than the call timeout
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
		return
	}
	var ev cloudevents.Event
	if err := json.Unmarshal(body, &ev); err != nil || ev.Validate() != nil || r.Header.Get("webhook-id") != ev.ID() {
		http.Error(w, "not a CloudEvent", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (s *sink) accepted() []cloudevents.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]cloudevents.Event(nil), s.events...)
}

// TestE2EAuditStreamLosesNothing: the audit stream through the binary,
// on PostgreSQL, to a real receiver over TLS. While the receiver is down
// (503, a redirect, no answer) the service sends, follows no redirect,
// and a review runs to done meanwhile; once the receiver is up, every
// audit event of GET /v1/audit and every call record arrives, signed so
// that the Standard Webhooks library accepts it, as a CloudEvent whose
// data is the stored record, in order per tenant, with ids to
// deduplicate on. A forged delivery is refused by that receiver.
func TestE2EAuditStreamLosesNothing(t *testing.T) {
	t.Parallel()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	verifier, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{verifier: verifier}
	receiver := startTLS(t, s)
	hook := strings.TrimSuffix(receiver.url(), "/mcp") + "/audit"

	in, _ := scriptedInstance(t, map[string]any{"perReview": true,
		"finder": []any{
			toolTurn(call("mcp_wiki_search", map[string]any{"query": "cache"})),
			contentTurn(map[string]any{"findings": []any{}}),
		},
		"summary": []any{contentTurn("Nothing to report.")},
	}, "QUAVON_AUDIT_WEBHOOK_URL="+hook, "QUAVON_AUDIT_WEBHOOK_SECRET="+secret, "QUAVON_MCP_CALL_TIMEOUT_MS=1500")
	in.secret(secret, base64.StdEncoding.EncodeToString(key))
	tenantA, a := in.tenant("streama", "tenant:manage,repo:manage")
	tenantB, b := in.tenant("streamb", "tenant:manage,repo:manage")
	p := startMCP(t, era2026, func(p *mcpPeer) {
		p.addTool("search", "Searches the wiki.", searchSchema(), readOnly(), "Wiki page about caches.")
	})
	serverID := allowlistSearch(t, a, "wiki", p, "e2e-auditstream-bearer-Zk31")
	repoID := privateRepoWithCalls(t, a, 5, serverID)
	_, review := runReview(t, a, repoID)
	expectDone(t, review) // the stream's failures delay no review
	_ = registerServer(t, b, "docs", p.url(), "e2e-auditstream-bearer-Yq88")

	// Down for a while: deliveries are tried and refused, none accepted.
	deadline := time.Now().Add(30 * time.Second)
	for metric(t, in, `quavon_audit_deliveries_total{outcome="failed"}`) < 4 {
		if time.Now().After(deadline) {
			t.Fatalf("no failed deliveries while the receiver was down:\n%s", in.logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := s.accepted(); len(got) != 0 {
		t.Fatalf("%d events accepted while down", len(got))
	}
	if metric(t, in, "quavon_audit_outbox_events") <= 0 {
		t.Errorf("the outbox's backlog is not exported while the receiver is down")
	}

	s.up.Store(true)
	wantA, wantB := auditEvents(t, a, 200), auditEvents(t, b, 200)
	wantCalls := calls(t, a, serverID)
	if len(wantCalls) == 0 || len(wantA) < 3 || len(wantB) < 1 {
		t.Fatalf("too little to stream: %d calls, %d and %d audit events", len(wantCalls), len(wantA), len(wantB))
	}
	deadline = time.Now().Add(90 * time.Second)
	for metric(t, in, "quavon_audit_outbox_events") != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the outbox did not empty within 90 s of the receiver coming back:\n%s", in.logs.String())
		}
		time.Sleep(250 * time.Millisecond)
	}

	// Deduplicate on the id, as a receiver would; a duplicate is the
	// same event.
	byID := map[string]cloudevents.Event{}
	lastSeq := map[string]string{}
	var unique []cloudevents.Event
	for _, ev := range s.accepted() {
		if prev, dup := byID[ev.ID()]; dup {
			if string(prev.Data()) != string(ev.Data()) {
				t.Errorf("event %s delivered twice with different data", ev.ID())
			}
			continue
		}
		byID[ev.ID()] = ev
		unique = append(unique, ev)
		tenant, _ := ev.Extensions()["tenantid"].(string)
		seq, _ := ev.Extensions()["sequence"].(string)
		if ev.Source() != "/codelotse/tenants/"+tenant || len(seq) != 20 {
			t.Errorf("event %s: source %q, tenantid %q, sequence %q", ev.ID(), ev.Source(), tenant, seq)
		}
		if seq <= lastSeq[tenant] {
			t.Errorf("tenant %s: sequence %s arrived after %s", tenant, seq, lastSeq[tenant])
		}
		lastSeq[tenant] = seq
	}

	// Every stored audit event and call record arrived.
	type auditKey struct{ tenant, action, target, at string }
	got := map[auditKey]bool{}
	var gotCalls []map[string]any
	for _, ev := range unique {
		var d map[string]any
		if err := json.Unmarshal(ev.Data(), &d); err != nil {
			t.Fatal(err)
		}
		tenant, _ := ev.Extensions()["tenantid"].(string)
		switch ev.Type() {
		case "com.codelotse.audit.event":
			at, _ := time.Parse(time.RFC3339Nano, d["at"].(string))
			got[auditKey{tenant, d["action"].(string), d["target"].(string), at.UTC().Format(time.RFC3339Nano)}] = true
		case "com.codelotse.mcp.call":
			if _, leaked := d["arguments"]; leaked {
				t.Errorf("call record event carries arguments: %s", ev.Data())
			}
			gotCalls = append(gotCalls, d)
		default:
			t.Errorf("unexpected event type %q", ev.Type())
		}
	}
	for tenant, events := range map[string][]map[string]any{tenantA: wantA, tenantB: wantB} {
		for _, e := range events {
			at, _ := time.Parse(time.RFC3339Nano, e["at"].(string))
			k := auditKey{tenant, e["action"].(string), e["target"].(string), at.UTC().Format(time.RFC3339Nano)}
			if !got[k] {
				t.Errorf("audit event %v of GET /v1/audit never arrived", k)
			}
		}
	}
	if len(gotCalls) != len(wantCalls) {
		t.Errorf("%d call records arrived, %d stored", len(gotCalls), len(wantCalls))
	}
	for _, c := range wantCalls {
		found := false
		for _, g := range gotCalls {
			found = found || (g["argumentsHash"] == c["argumentsHash"] && g["status"] == c["status"] && g["serverId"] == serverID)
		}
		if !found {
			t.Errorf("call record %v never arrived", c)
		}
	}
	if n := s.followed.Load(); n != 0 {
		t.Errorf("the redirect's target received %d requests", n)
	}
	if s.refused != 0 {
		t.Errorf("%d of the service's deliveries failed verification", s.refused)
	}

	// A forged delivery: a real event's body altered, or signed with
	// another secret, is refused by the same receiver.
	ev := unique[0]
	body, _ := json.Marshal(ev)
	forged := strings.Replace(string(body), ev.ID(), "00000000-0000-4000-8000-000000000000", 1)
	other, _ := standardwebhooks.NewWebhook("whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 32)))
	now := time.Now()
	signed, _ := other.Sign(ev.ID(), now, body)
	for name, req := range map[string]struct {
		body, sig string
	}{
		"altered body": {forged, mustSign(t, verifier, ev.ID(), now, body)},
		"other secret": {string(body), signed},
	} {
		h := http.Header{"Webhook-Id": {ev.ID()}, "Webhook-Timestamp": {fmtUnix(now)}, "Webhook-Signature": {req.sig}}
		if err := verifier.Verify([]byte(req.body), h); err == nil {
			t.Errorf("%s: the receiver accepted a forged delivery", name)
		}
	}
	in.checkLogsHoldNoSecrets(t)
}

func mustSign(t *testing.T, w *standardwebhooks.Webhook, id string, at time.Time, body []byte) string {
	t.Helper()
	sig, err := w.Sign(id, at, body)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

func fmtUnix(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }
