package reviews

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/ports"
)

// ActionPromptsRead is the audit action of reading a review's prompt logs.
const ActionPromptsRead = "review.prompts.read"

// promptLogWriteTimeout bounds writing one prompt log, which runs after
// the model answered, also when the attempt's context has ended.
const promptLogWriteTimeout = 10 * time.Second

// PromptMessage is one message of a kept model request.
type PromptMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Prompt is one kept model request, opened.
type Prompt struct {
	Step      string
	Turn      int
	Messages  []PromptMessage
	CreatedAt time.Time
	ExpiresAt time.Time
}

// sealedPrompt is the plaintext of a prompt log before sealing.
type sealedPrompt struct {
	Messages []PromptMessage `json:"messages"`
}

// promptRecorder is the model of one review run: every request goes to
// the model, then, if the tenant's setting is on, the request's messages
// and the model's answer are redacted by the secret scanner, sealed under
// [PromptLogAAD] and written in a transaction of the review's tenant. That
// transaction reads the setting again under a share lock before it
// writes, so a request that ends after the setting was turned off writes
// nothing, and turning it off (which deletes the logs) waits for a write
// in flight; the redaction and the sealing happen before, outside any
// lock. Failing to keep a log never fails the review, and nothing of a
// log is logged.
type promptRecorder struct {
	deps     ReviewDeps
	model    ports.Model
	tenantID string
	reviewID string

	mu    sync.Mutex
	turns map[string]int
}

func newPromptRecorder(d ReviewDeps, tenantID, reviewID string) *promptRecorder {
	return &promptRecorder{deps: d, model: d.Model, tenantID: tenantID, reviewID: reviewID, turns: map[string]int{}}
}

// Complete asks the model and keeps the exchange when the tenant's
// setting says so.
func (r *promptRecorder) Complete(ctx context.Context, req ports.ModelRequest) (ports.ModelResponse, error) {
	r.mu.Lock()
	r.turns[req.Step]++
	turn := r.turns[req.Step]
	r.mu.Unlock()
	resp, err := r.model.Complete(ctx, req)
	var answer *ports.ModelResponse
	if err == nil {
		answer = &resp
	}
	if werr := r.keep(ctx, req, answer, turn); werr != nil {
		r.deps.warn("debug prompt log not written", map[string]string{"review_id": r.reviewID, "step": req.Step, "error": werr.Error()})
	}
	return resp, err
}

// keep writes the log of one request (and its answer, when there is one)
// if the tenant keeps them.
func (r *promptRecorder) keep(ctx context.Context, req ports.ModelRequest, answer *ports.ModelResponse, turn int) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), promptLogWriteTimeout)
	defer cancel()
	var on bool
	err := r.deps.Tenants.InTenant(ctx, r.tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		st, err := tx.Settings().Get(ctx)
		on = st.DebugPrompts()
		return err
	})
	if err != nil {
		return fmt.Errorf("read settings: %w", err)
	}
	if !on {
		return nil
	}
	messages := renderMessages(req.Messages)
	if answer != nil {
		messages = append(messages, renderMessage(ports.Message{Role: ports.RoleAssistant, Content: answer.Content, ToolCalls: answer.ToolCalls}))
	}
	for i := range messages {
		messages[i].Content = r.deps.Scanner.Redact(messages[i].Content, r.deps.Scanner.Scan(messages[i].Content))
	}
	plain, err := json.Marshal(sealedPrompt{Messages: messages})
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	sealed, err := app.SealPromptLog(r.deps.Cipher, r.reviewID, plain)
	clear(plain)
	if err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	return r.deps.Tenants.InTenant(ctx, r.tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		st, err := tx.Settings().Get(ctx)
		if err != nil {
			return fmt.Errorf("read settings: %w", err)
		}
		if !st.DebugPrompts() {
			return nil // turned off meanwhile
		}
		now := r.deps.Clock.Now()
		return tx.PromptLogs().Insert(ctx, ports.PromptLog{
			ReviewID: r.reviewID, Step: req.Step, Turn: turn, Sealed: sealed, CreatedAt: now, ExpiresAt: now.Add(st.PromptTTL()),
		})
	})
}

// renderMessages turns the model's messages into role and text.
func renderMessages(in []ports.Message) []PromptMessage {
	out := make([]PromptMessage, 0, len(in)+1)
	for _, m := range in {
		out = append(out, renderMessage(m))
	}
	return out
}

// renderMessage writes an assistant's tool calls after its text, one
// line each: "tool call <id> <name> <arguments>".
func renderMessage(m ports.Message) PromptMessage {
	var b strings.Builder
	b.WriteString(m.Content)
	for _, c := range m.ToolCalls {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "tool call %s %s %s", c.ID, c.Name, c.Arguments)
	}
	return PromptMessage{Role: m.Role, Content: b.String()}
}

// ListPrompts is the query of GET /v1/reviews/{id}/prompts.
type ListPrompts struct{ ReviewID string }

// ListPromptsHandler reads a review's debug prompt logs (tenant:manage).
// Safe for concurrent use.
type ListPromptsHandler struct{ d Deps }

// NewListPromptsHandler returns a [ListPromptsHandler].
func NewListPromptsHandler(d Deps) *ListPromptsHandler { return &ListPromptsHandler{d: d} }

// Handle opens the review's prompt logs that have not expired, in the order
// they were written, and records review.prompts.read. not_found for an
// unknown, foreign or malformed review id; keys_unavailable when a log
// cannot be opened (its key left the ring).
func (h *ListPromptsHandler) Handle(ctx context.Context, p ports.Principal, q ListPrompts) ([]Prompt, error) {
	rid, ok := id.Parse(q.ReviewID)
	if !ok {
		return nil, app.Fail(app.CodeNotFound, "no such review")
	}
	out := []Prompt{}
	err := h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if _, err := tx.Reviews().Get(ctx, rid); err != nil {
			return app.NotFound(err, "review")
		}
		logs, err := tx.PromptLogs().List(ctx, rid, h.d.Clock.Now())
		if err != nil {
			return fmt.Errorf("list prompt logs: %w", err)
		}
		for _, l := range logs {
			pr, err := h.open(rid, l)
			if err != nil {
				return err
			}
			out = append(out, pr)
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionPromptsRead, Actor: app.Actor(p), Target: rid, At: h.d.Clock.Now(),
			Details: map[string]any{"prompts": len(out)},
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (h *ListPromptsHandler) open(reviewID string, l ports.PromptLog) (Prompt, error) {
	plain, err := app.OpenPromptLog(h.d.Cipher, reviewID, l.Sealed)
	if err != nil {
		return Prompt{}, err
	}
	var sp sealedPrompt
	err = json.Unmarshal(plain, &sp)
	clear(plain)
	if err != nil {
		return Prompt{}, fmt.Errorf("decode prompt log: %w", err)
	}
	return Prompt{Step: l.Step, Turn: l.Turn, Messages: sp.Messages, CreatedAt: l.CreatedAt, ExpiresAt: l.ExpiresAt}, nil
}
