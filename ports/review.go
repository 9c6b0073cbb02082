package ports

import (
	"context"
	"encoding/json"
	"time"

	"github.com/codelotse/codelotse/domain/review"
)

// ReviewJobKind is the job queue's kind of a review run.
const ReviewJobKind = "review_run"

// ReviewJob is the queued job of a review run, shared by the adapter that
// enqueues it and the worker that runs it. It carries ids only: the diff
// and the files stay in the tenant's rows, under row-level security,
// while the queue's table is not tenant-scoped.
type ReviewJob struct {
	TenantID string `json:"tenantId"`
	ReviewID string `json:"reviewId"`
}

// Kind names the job for the queue.
func (ReviewJob) Kind() string { return ReviewJobKind }

// ReviewRepo stores the tenant's review runs. The transitions are the
// domain's ([review.Run]); Start and Finish store them only over a stored
// run the transition may leave: Start over a queued or running run,
// Finish of a done run over a running one (a run is never done without
// running), of a failed run over a queued or running one (a job may give
// up before it ran). So of two attempts that both loaded a running run,
// the one that finishes second gets ErrConflict and the first result
// stays. The stored times keep their order (created ≤ started ≤
// finished) whatever the runs they are given say: two attempts may each
// hold a start of their own, read on their own replica's clock.
type ReviewRepo interface {
	// Insert stores r's request as a queued run (whatever r's state and
	// result) and enqueues its job in the same transaction: both commit
	// or neither. ErrNotFound when the repository is missing or another
	// tenant's, ErrConflict when the id is used.
	Insert(ctx context.Context, r *review.Run) error
	// Get returns a run with its whole request, or ErrNotFound.
	Get(ctx context.Context, id string) (*review.Run, error)
	// Recent returns at most limit runs of a repository, newest first,
	// without their diff and files.
	Recent(ctx context.Context, repositoryID string, limit int) ([]*review.Run, error)
	// Start stores the start of r, a run that [review.Run.Start] made
	// running: the stored run becomes running with r's start, unless it
	// has one (a retry keeps the first, and so does an attempt that read
	// the run queued while another started it). It returns the start the
	// stored run keeps, which the caller gives r
	// ([review.Run.TakeStoredStart]). ErrNotFound when it is missing,
	// ErrConflict when the stored run is done or failed, an error when r
	// is not running.
	Start(ctx context.Context, r *review.Run) (time.Time, error)
	// Finish stores the end of r, a run that [review.Run.Complete] or
	// [review.Run.Fail] finished: its status, result and finish time, and
	// its start when the stored run has none; never its request. The
	// finish stored is r's, or the stored run's start when that is later
	// (r's start was not the one stored), so the row keeps its order.
	// ErrConflict when the stored run is already done or failed (it keeps
	// its result), or when r is done and the stored run is queued;
	// ErrNotFound when it is missing; an error when r is not finished.
	Finish(ctx context.Context, r *review.Run) error
}

// Model roles and the three steps of a review.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"

	StepFinder   = "finder"
	StepVerifier = "verifier"
	StepSummary  = "summary"
)

// ModelToolCall is a tool call the model asks for.
type ModelToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage
}

// Message is one message of a model conversation. A tool message answers
// the assistant's call ToolCallID.
type Message struct {
	Role       string
	Content    string
	ToolCalls  []ModelToolCall
	ToolCallID string
}

// ToolSpec is a tool offered to the model: a name, a description and the
// JSON schema of its arguments.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// ModelRequest is one model turn of a step.
type ModelRequest struct {
	Step     string
	Messages []Message
	Tools    []ToolSpec
}

// ModelResponse is the model's answer: tool calls, or final content.
type ModelResponse struct {
	Content   string
	ToolCalls []ModelToolCall
}

// Model is the model endpoint. Complete is safe for concurrent use.
type Model interface {
	Complete(ctx context.Context, req ModelRequest) (ModelResponse, error)
}

// SecretFinding is one match of the secret scanner: the rule and the byte
// range in the scanned text. It never carries the matched text.
type SecretFinding struct {
	Rule  string
	Start int
	End   int
}

// SecretRuleEmail is the rule name every SecretScanner gives e-mail
// addresses: personal data, redacted in results, blocked in arguments.
const SecretRuleEmail = "email-address"

// SecretScanner finds secrets, credentials in URLs and e-mail addresses in
// text. Safe for concurrent use.
type SecretScanner interface {
	// Scan returns every finding, in order of Start.
	Scan(text string) []SecretFinding
	// Redact returns text with the findings Scan returned for it replaced
	// by markers that name the rule, never the secret; taking the findings
	// spares a second scan of the same text.
	Redact(text string, findings []SecretFinding) string
}

// Metrics counts MCP context calls by outcome (quavon_mcp_context_calls_total).
type Metrics interface {
	McpCall(outcome review.CallStatus)
}
