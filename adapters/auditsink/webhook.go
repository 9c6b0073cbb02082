// Package auditsink is the driven adapter of the audit stream's sink: the
// operator's https webhook (QUAVON_AUDIT_WEBHOOK_URL). Each outbox entry
// is one POST of a CloudEvents 1.0 event in structured JSON mode, signed
// as Standard Webhooks specify with QUAVON_AUDIT_WEBHOOK_SECRET:
//
//	webhook-id:        the event's id, the same at every attempt
//	webhook-timestamp: the attempt's Unix time in seconds
//	webhook-signature: "v1," + base64(HMAC-SHA256(key, id "." timestamp "." body))
//
// The request goes through the MCP client's guarded egress (https, the
// address rules, no redirects, the call timeout).
package auditsink

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2/event"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// The CloudEvents types of the stream.
const (
	AuditEventType = "com.codelotse.audit.event"
	CallRecordType = "com.codelotse.mcp.call"
)

// Poster sends one guarded POST ([mcpclient.Connector.Post]).
type Poster interface {
	Post(ctx context.Context, u server.URL, header map[string]string, body []byte) (int, error)
}

// Webhook implements [ports.AuditSink].
type Webhook struct {
	url  server.URL
	key  []byte
	post Poster
	now  func() time.Time
}

var _ ports.AuditSink = (*Webhook)(nil)

// NewWebhook returns the sink that posts to u, signing with key (see
// auditstream.ParseSecret).
func NewWebhook(u server.URL, key []byte, post Poster, now func() time.Time) *Webhook {
	return &Webhook{url: u, key: key, post: post, now: now}
}

// Deliver posts e; nil only for a 2xx answer. An error names the status
// or the egress code, never the URL.
func (w *Webhook) Deliver(ctx context.Context, e ports.OutboxEntry) error {
	body, err := Event(e)
	if err != nil {
		return err
	}
	ts := strconv.FormatInt(w.now().Unix(), 10)
	status, err := w.post.Post(ctx, w.url, map[string]string{
		"Content-Type":      "application/cloudevents+json",
		"webhook-id":        e.ID,
		"webhook-timestamp": ts,
		"webhook-signature": Sign(w.key, e.ID, ts, body),
	}, body)
	switch {
	case err != nil:
		return fmt.Errorf("audit webhook: %w", err)
	case status < 200 || status > 299:
		return fmt.Errorf("audit webhook: answered %d", status)
	}
	return nil
}

// Sign is the Standard Webhooks signature of one delivery.
func Sign(key []byte, id, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + timestamp + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Event is e as a CloudEvents 1.0 event in JSON: its id, the tenant as
// source and as the extension tenantid, the time it was stored, the
// payload-free data, and the extension sequence, the entry's order as 20
// digits (lexically ordered, as that extension asks).
func Event(e ports.OutboxEntry) ([]byte, error) {
	ev := cloudevents.New(cloudevents.CloudEventsVersionV1)
	ev.SetID(e.ID)
	ev.SetSource("/codelotse/tenants/" + e.TenantID)
	ev.SetTime(e.At)
	ev.SetExtension("tenantid", e.TenantID)
	ev.SetExtension("sequence", fmt.Sprintf("%020d", e.Seq))
	switch e.Type {
	case ports.OutboxAudit:
		ev.SetType(AuditEventType)
	case ports.OutboxCall:
		ev.SetType(CallRecordType)
	default:
		return nil, fmt.Errorf("audit webhook: unknown entry type %q", e.Type)
	}
	if err := ev.SetData(cloudevents.ApplicationJSON, json.RawMessage(e.Data)); err != nil {
		return nil, fmt.Errorf("audit webhook: %w", err)
	}
	if err := ev.Validate(); err != nil {
		return nil, fmt.Errorf("audit webhook: %w", err)
	}
	return json.Marshal(ev)
}
