package auditsink_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2/event"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/codelotse/codelotse/adapters/auditsink"
	"github.com/codelotse/codelotse/domain/auditstream"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// The receiver's side: a secret in the Standard Webhooks form, which the
// official library reads, and the one we sign with (another for forgery).
var (
	secret      = "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	otherSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("fedcba9876543210fedcba9876543210"))
)

// hookHost is the sink's host in the fake-poster tests; no error may name it.
const hookHost = "audit-sink.example.com"

func mustKey(t testing.TB, s string) []byte {
	t.Helper()
	k, err := auditstream.ParseSecret(s)
	if err != nil {
		t.Fatalf("ParseSecret: %v", err)
	}
	return k
}

func mustURL(t testing.TB, s string) server.URL {
	t.Helper()
	u, err := server.ParseURL(s)
	if err != nil {
		t.Fatalf("ParseURL(%q): %v", s, err)
	}
	return u
}

// posted is one request as the fake poster saw it.
type posted struct {
	url    server.URL
	header http.Header
	body   []byte
}

// fakePoster records every Post and answers status, err.
type fakePoster struct {
	mu     sync.Mutex
	status int
	err    error
	got    []posted
}

func (p *fakePoster) Post(_ context.Context, u server.URL, header map[string]string, body []byte) (int, error) {
	h := http.Header{}
	for k, v := range header {
		h.Set(k, v)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.got = append(p.got, posted{url: u, header: h, body: bytes.Clone(body)})
	return p.status, p.err
}

func (p *fakePoster) requests() []posted {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]posted(nil), p.got...)
}

func auditEntry() ports.OutboxEntry {
	return ports.OutboxEntry{
		Seq: 42, ID: "0190f1d2-7c3a-7b7e-9a51-3f5d7c1e2a10", TenantID: "acme",
		Type: ports.OutboxAudit, At: time.Date(2026, 12, 2, 7, 3, 47, 123456789, time.UTC),
		Data: json.RawMessage(`{"action":"server.created","actor":"alice","serverId":"s-1"}`),
	}
}

func callEntry() ports.OutboxEntry {
	return ports.OutboxEntry{
		Seq: 9_000_000_000_000_000_001, ID: "0190f1d2-7c3a-7b7e-9a51-3f5d7c1e2a11", TenantID: "globex",
		Type: ports.OutboxCall, At: time.Date(2026, 1, 31, 23, 59, 59, 0, time.FixedZone("CET", 3600)),
		Data:     json.RawMessage(` { "tool" : "search", "requestBytes": 120, "responseBytes": 4096, "sha256": "ab12" } `),
		Attempts: 3,
	}
}

// deliver sends e through a Webhook whose clock says now, and returns
// what the poster received.
func deliver(t *testing.T, e ports.OutboxEntry, now time.Time) posted {
	t.Helper()
	p := &fakePoster{status: http.StatusNoContent}
	w := auditsink.NewWebhook(mustURL(t, "https://"+hookHost+"/hooks/audit"), mustKey(t, secret), p, func() time.Time { return now })
	if err := w.Deliver(context.Background(), e); err != nil {
		t.Fatalf("Deliver: %v", err)
	}
	got := p.requests()
	if len(got) != 1 {
		t.Fatalf("posted %d requests, want 1", len(got))
	}
	return got[0]
}

// verify is the receiver's check, with the official library.
func verify(t testing.TB, sec string, body []byte, h http.Header) error {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(sec)
	if err != nil {
		t.Fatalf("standardwebhooks.NewWebhook: %v", err)
	}
	return wh.Verify(body, h)
}

// decode reads the body as a structured CloudEvent with the SDK and
// validates it.
func decode(t testing.TB, body []byte) cloudevents.Event {
	t.Helper()
	var ev cloudevents.Event
	if err := ev.UnmarshalJSON(body); err != nil {
		t.Fatalf("CloudEvents UnmarshalJSON: %v\n%s", err, body)
	}
	if err := ev.Validate(); err != nil {
		t.Fatalf("CloudEvents Validate: %v", err)
	}
	return ev
}

// checkRaw asserts the structured-mode JSON itself, as a receiver
// without the SDK reads it: the data inline as JSON under "data" (never
// base64 under "data_base64"), the context attributes as strings.
func checkRaw(t testing.TB, body []byte, e ports.OutboxEntry) {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatalf("body is not a JSON object: %v", err)
	}
	if _, ok := raw["data_base64"]; ok {
		t.Errorf("data sent as data_base64, want inline JSON: %s", body)
	}
	var got, want any
	if err := json.Unmarshal(raw["data"], &got); err != nil {
		t.Fatalf("data member %q is not JSON: %v", raw["data"], err)
	}
	_ = json.Unmarshal(e.Data, &want)
	if _, isObject := got.(map[string]any); !isObject || !jsonEqual(got, want) {
		t.Errorf("data member = %s, want the entry's JSON %s", raw["data"], e.Data)
	}
	for k, v := range map[string]string{"specversion": "1.0", "id": e.ID, "datacontenttype": "application/json",
		"tenantid": e.TenantID, "sequence": fmt.Sprintf("%020d", e.Seq)} {
		var s string
		if err := json.Unmarshal(raw[k], &s); err != nil || s != v {
			t.Errorf("member %s = %s, want the string %q", k, raw[k], v)
		}
	}
}

// checkEvent asserts every attribute the stream promises.
func checkEvent(t testing.TB, ev cloudevents.Event, e ports.OutboxEntry, wantType string) {
	t.Helper()
	if ev.SpecVersion() != "1.0" {
		t.Errorf("specversion = %q, want 1.0", ev.SpecVersion())
	}
	if ev.ID() != e.ID {
		t.Errorf("id = %q, want the entry id %q", ev.ID(), e.ID)
	}
	if ev.Type() != wantType {
		t.Errorf("type = %q, want %q", ev.Type(), wantType)
	}
	if want := "/codelotse/tenants/" + e.TenantID; ev.Source() != want {
		t.Errorf("source = %q, want %q", ev.Source(), want)
	}
	if !ev.Time().Equal(e.At) {
		t.Errorf("time = %v, want %v", ev.Time(), e.At)
	}
	if ev.DataContentType() != "application/json" {
		t.Errorf("datacontenttype = %q, want application/json", ev.DataContentType())
	}
	ext := ev.Extensions()
	if got, _ := ext["tenantid"].(string); got != e.TenantID {
		t.Errorf("tenantid = %#v, want %q", ext["tenantid"], e.TenantID)
	}
	seq, _ := ext["sequence"].(string)
	if len(seq) != 20 || seq != fmt.Sprintf("%020d", e.Seq) {
		t.Errorf("sequence = %#v, want %q (20 digits)", ext["sequence"], fmt.Sprintf("%020d", e.Seq))
	}
	if n, err := strconv.ParseInt(seq, 10, 64); err != nil || n != e.Seq {
		t.Errorf("sequence %q reads as %d, %v; want %d", seq, n, err, e.Seq)
	}
	if len(ext) != 2 {
		t.Errorf("extensions = %v, want tenantid and sequence only", ext)
	}
	var got, want any
	if err := json.Unmarshal(ev.Data(), &got); err != nil {
		t.Fatalf("data %q is not JSON: %v", ev.Data(), err)
	}
	if err := json.Unmarshal(e.Data, &want); err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(got, want) {
		t.Errorf("data = %s, want %s", ev.Data(), e.Data)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func TestWebhookDeliveryVerifies(t *testing.T) {
	for _, tt := range []struct {
		name     string
		entry    ports.OutboxEntry
		wantType string
	}{
		{"audit event", auditEntry(), auditsink.AuditEventType},
		{"call record", callEntry(), auditsink.CallRecordType},
		{"sequence zero, empty object", ports.OutboxEntry{Seq: 0, ID: "e-0", TenantID: "t", Type: ports.OutboxAudit, At: time.Unix(0, 0).UTC(), Data: json.RawMessage(`{}`)}, auditsink.AuditEventType},
		{"id with dots, unicode data", ports.OutboxEntry{Seq: 7, ID: "a.b.c", TenantID: "t.1", Type: ports.OutboxCall, At: time.Unix(1, 0).UTC(), Data: json.RawMessage(`{"note":"caf\u00e9 \u2603 \"quoted\" <b>"}`)}, auditsink.CallRecordType},
	} {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Now()
			p := deliver(t, tt.entry, now)
			if err := verify(t, secret, p.body, p.header); err != nil {
				t.Fatalf("the official library refuses our delivery: %v\nheaders %v", err, p.header)
			}
			if got := p.header.Get("webhook-id"); got != tt.entry.ID {
				t.Errorf("webhook-id = %q, want the entry id %q", got, tt.entry.ID)
			}
			if got := p.header.Get("webhook-timestamp"); got != strconv.FormatInt(now.Unix(), 10) {
				t.Errorf("webhook-timestamp = %q, want %d (Unix seconds)", got, now.Unix())
			}
			sig := p.header.Get("webhook-signature")
			if !strings.HasPrefix(sig, "v1,") || strings.Contains(sig, " ") {
				t.Errorf("webhook-signature = %q, want one v1 signature", sig)
			}
			if got := p.header.Get("Content-Type"); got != "application/cloudevents+json" {
				t.Errorf("Content-Type = %q, want application/cloudevents+json (structured mode)", got)
			}
			if p.header.Get("Authorization") != "" {
				t.Errorf("an Authorization header is sent: %q", p.header.Get("Authorization"))
			}
			if got := p.url.String(); got != "https://"+hookHost+"/hooks/audit" {
				t.Errorf("posted to %q", got)
			}
			checkEvent(t, decode(t, p.body), tt.entry, tt.wantType)
			checkRaw(t, p.body, tt.entry)
		})
	}
}

func TestWebhookSignMatchesLibrary(t *testing.T) {
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	key := mustKey(t, secret)
	for _, tt := range []struct {
		id   string
		ts   int64
		body string
	}{
		{"msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, `{"test": 2432232314}`},
		{"e-1", 0, ``},
		{"a.b", 1, `.`},
		{"x", 9999999999, strings.Repeat("z", 10000)},
	} {
		want, err := wh.Sign(tt.id, time.Unix(tt.ts, 0), []byte(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		if got := auditsink.Sign(key, tt.id, strconv.FormatInt(tt.ts, 10), []byte(tt.body)); got != want {
			t.Errorf("Sign(%q, %d, %.20q) = %q, the library signs %q", tt.id, tt.ts, tt.body, got, want)
		}
	}
	// The specification's test vector (standard-webhooks/spec).
	specKey, _ := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if got := auditsink.Sign(specKey, "msg_p5jXN8AQM9LWM0D4loKWxJek", "1614265330", []byte(`{"test": 2432232314}`)); got != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		t.Errorf("Sign of the specification's example = %q", got)
	}
}

func TestWebhookForgedDeliveriesRefused(t *testing.T) {
	// The receiver, holding secret, must refuse each of these.
	for _, tt := range []struct {
		name string
		// at is the delivery's clock, relative to now.
		at     time.Duration
		sec    string // the receiver's secret
		forge  func(h http.Header, body []byte) []byte
		wantIs error
	}{
		{name: "signed with another secret", sec: otherSecret, wantIs: standardwebhooks.ErrNoMatchingSignature},
		{name: "body altered by one byte", forge: func(_ http.Header, b []byte) []byte {
			b = bytes.Clone(b)
			i := bytes.Index(b, []byte(`"acme"`)) + 1
			b[i] ^= 0x01
			return b
		}, wantIs: standardwebhooks.ErrNoMatchingSignature},
		{name: "body with a byte appended", forge: func(_ http.Header, b []byte) []byte { return append(bytes.Clone(b), ' ') }, wantIs: standardwebhooks.ErrNoMatchingSignature},
		{name: "body empty", forge: func(http.Header, []byte) []byte { return nil }, wantIs: standardwebhooks.ErrNoMatchingSignature},
		{name: "webhook-id changed", forge: func(h http.Header, b []byte) []byte {
			h.Set("webhook-id", h.Get("webhook-id")+"x")
			return b
		}, wantIs: standardwebhooks.ErrNoMatchingSignature},
		{name: "webhook-id of another entry", forge: func(h http.Header, b []byte) []byte {
			h.Set("webhook-id", callEntry().ID)
			return b
		}, wantIs: standardwebhooks.ErrNoMatchingSignature},
		{name: "timestamp changed by a second", forge: func(h http.Header, b []byte) []byte {
			n, _ := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
			h.Set("webhook-timestamp", strconv.FormatInt(n-1, 10))
			return b
		}, wantIs: standardwebhooks.ErrNoMatchingSignature},
		{name: "timestamp older than the 5 minute tolerance", at: -6 * time.Minute, wantIs: standardwebhooks.ErrMessageTooOld},
		{name: "timestamp newer than the tolerance", at: 6 * time.Minute, wantIs: standardwebhooks.ErrMessageTooNew},
		{name: "signature header missing", forge: func(h http.Header, b []byte) []byte {
			h.Del("webhook-signature")
			return b
		}, wantIs: standardwebhooks.ErrRequiredHeaders},
		{name: "id header missing", forge: func(h http.Header, b []byte) []byte {
			h.Del("webhook-id")
			return b
		}, wantIs: standardwebhooks.ErrRequiredHeaders},
		{name: "timestamp header missing", forge: func(h http.Header, b []byte) []byte {
			h.Del("webhook-timestamp")
			return b
		}, wantIs: standardwebhooks.ErrRequiredHeaders},
		{name: "signature relabelled v2", forge: func(h http.Header, b []byte) []byte {
			h.Set("webhook-signature", "v2,"+strings.TrimPrefix(h.Get("webhook-signature"), "v1,"))
			return b
		}, wantIs: standardwebhooks.ErrNoMatchingSignature},
		{name: "signature truncated", forge: func(h http.Header, b []byte) []byte {
			s := h.Get("webhook-signature")
			h.Set("webhook-signature", s[:len(s)-2])
			return b
		}, wantIs: standardwebhooks.ErrNoMatchingSignature},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := deliver(t, auditEntry(), time.Now().Add(tt.at))
			body := p.body
			if tt.forge != nil {
				body = tt.forge(p.header, body)
			}
			sec := secret
			if tt.sec != "" {
				sec = tt.sec
			}
			err := verify(t, sec, body, p.header)
			if err == nil {
				t.Fatal("the library accepts the forged delivery")
			}
			if !errors.Is(err, tt.wantIs) {
				t.Fatalf("library error = %v, want %v", err, tt.wantIs)
			}
		})
	}
}

func TestWebhookEveryBodyByteIsSigned(t *testing.T) {
	p := deliver(t, callEntry(), time.Now())
	for i := range p.body {
		b := bytes.Clone(p.body)
		b[i] ^= 0x20
		if verify(t, secret, b, p.header) == nil {
			t.Fatalf("flipping byte %d (%q) still verifies", i, p.body[i])
		}
	}
}

func TestWebhookRetryKeepsIDAndSignsAnew(t *testing.T) {
	e := auditEntry()
	now := time.Now()
	first := deliver(t, e, now.Add(-2*time.Minute))
	again := deliver(t, e, now)
	if first.header.Get("webhook-id") != again.header.Get("webhook-id") || again.header.Get("webhook-id") != e.ID {
		t.Fatalf("webhook-id %q then %q, want %q at every attempt", first.header.Get("webhook-id"), again.header.Get("webhook-id"), e.ID)
	}
	if first.header.Get("webhook-timestamp") == again.header.Get("webhook-timestamp") ||
		first.header.Get("webhook-signature") == again.header.Get("webhook-signature") {
		t.Fatal("a retry reuses the timestamp or signature of the first attempt")
	}
	if !bytes.Equal(first.body, again.body) {
		t.Fatal("a retry sends another body")
	}
	for _, p := range []posted{first, again} {
		if err := verify(t, secret, p.body, p.header); err != nil {
			t.Fatalf("attempt refused: %v", err)
		}
	}
}

func TestWebhookDeliverStatus(t *testing.T) {
	for _, tt := range []struct {
		status int
		ok     bool
	}{
		{200, true}, {201, true}, {202, true}, {204, true}, {299, true},
		{0, false}, {100, false}, {199, false},
		{300, false}, {301, false}, {302, false}, {304, false}, {307, false}, {308, false},
		{400, false}, {401, false}, {403, false}, {404, false}, {413, false}, {429, false},
		{500, false}, {502, false}, {503, false}, {599, false},
	} {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			p := &fakePoster{status: tt.status}
			w := auditsink.NewWebhook(mustURL(t, "https://"+hookHost+":8443/hooks/audit"), mustKey(t, secret), p, time.Now)
			err := w.Deliver(context.Background(), auditEntry())
			if len(p.requests()) != 1 {
				t.Fatalf("posted %d requests, want 1", len(p.requests()))
			}
			if tt.ok {
				if err != nil {
					t.Fatalf("Deliver on %d = %v, want nil", tt.status, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Deliver on %d = nil, want an error", tt.status)
			}
			msg := err.Error()
			if !strings.Contains(msg, strconv.Itoa(tt.status)) {
				t.Errorf("error %q does not name the status %d", msg, tt.status)
			}
			for _, leak := range []string{hookHost, "hooks/audit", "8443", "whsec_", auditEntry().TenantID} {
				if strings.Contains(msg, leak) {
					t.Errorf("error %q names %q", msg, leak)
				}
			}
		})
	}
}

func TestWebhookDeliverPosterError(t *testing.T) {
	for _, code := range []error{ports.ErrTimeout, ports.ErrRedirectRefused, ports.ErrAddressBlocked, ports.ErrServerUnreachable, ports.ErrResponseTooLarge} {
		t.Run(code.Error(), func(t *testing.T) {
			// A poster answering a 2xx status with an error still fails.
			p := &fakePoster{status: http.StatusOK, err: code}
			w := auditsink.NewWebhook(mustURL(t, "https://"+hookHost+"/hooks/audit"), mustKey(t, secret), p, time.Now)
			err := w.Deliver(context.Background(), auditEntry())
			if !errors.Is(err, code) {
				t.Fatalf("Deliver = %v, want it to wrap %v", err, code)
			}
			if strings.Contains(err.Error(), hookHost) {
				t.Errorf("error %q names the host", err)
			}
		})
	}
}

func TestWebhookBadEntryNotPosted(t *testing.T) {
	for _, tt := range []struct {
		name  string
		entry func(e *ports.OutboxEntry)
	}{
		{"unknown type", func(e *ports.OutboxEntry) { e.Type = "review" }},
		{"empty type", func(e *ports.OutboxEntry) { e.Type = "" }},
		{"type in upper case", func(e *ports.OutboxEntry) { e.Type = "AUDIT" }},
		{"type the CloudEvents name", func(e *ports.OutboxEntry) { e.Type = auditsink.AuditEventType }},
		{"data not JSON", func(e *ports.OutboxEntry) { e.Data = json.RawMessage(`{"a":`) }},
		{"empty id", func(e *ports.OutboxEntry) { e.ID = "" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := auditEntry()
			tt.entry(&e)
			p := &fakePoster{status: http.StatusOK}
			w := auditsink.NewWebhook(mustURL(t, "https://"+hookHost+"/hooks/audit"), mustKey(t, secret), p, time.Now)
			if err := w.Deliver(context.Background(), e); err == nil {
				t.Fatal("Deliver = nil, want an error")
			}
			if n := len(p.requests()); n != 0 {
				t.Fatalf("posted %d requests, want none", n)
			}
			if _, err := auditsink.Event(e); err == nil {
				t.Fatal("Event = nil error, want one")
			}
		})
	}
}

func TestWebhookEventSequenceOrdersLexically(t *testing.T) {
	seqs := []int64{0, 1, 9, 10, 99, 100, 123456789, 1<<53 + 1, 1<<63 - 1}
	var prev string
	for _, s := range seqs {
		e := auditEntry()
		e.Seq = s
		body, err := auditsink.Event(e)
		if err != nil {
			t.Fatal(err)
		}
		seq, _ := decode(t, body).Extensions()["sequence"].(string)
		if len(seq) != 20 || seq != fmt.Sprintf("%020d", s) {
			t.Fatalf("sequence of %d = %q, want 20 digits", s, seq)
		}
		if prev != "" && seq <= prev {
			t.Fatalf("sequence %q does not sort after %q", seq, prev)
		}
		prev = seq
	}
}
