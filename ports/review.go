package ports

import (
	"context"
	"encoding/json"
	"time"

	"github.com/codelotse/codelotse/domain/review"
)

// ReviewRun is a review request and, once done, its result.
type ReviewRun struct {
	ID            string
	RepositoryID  string
	Status        review.RunStatus
	Title         string
	Description   string
	Diff          string
	Files         map[string]string
	PromptVersion string
	Findings      []review.Finding
	Summary       string
	Stats         review.Stats
	CreatedAt     time.Time
	StartedAt     time.Time
	FinishedAt    time.Time
}

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

// ReviewRepo stores the tenant's review runs.
type ReviewRepo interface {
	// Insert stores a queued run and enqueues its job in the same
	// transaction: both commit or neither.
	Insert(ctx context.Context, r ReviewRun) error
	// Get returns a run or ErrNotFound.
	Get(ctx context.Context, id string) (ReviewRun, error)
	// Recent returns at most limit runs of a repository, newest first,
	// without their diff and files.
	Recent(ctx context.Context, repositoryID string, limit int) ([]ReviewRun, error)
	// Start marks a queued (or, on a retry, running) run as running and
	// returns it; ErrNotFound when it is missing, ErrConflict when it is
	// already done or failed.
	Start(ctx context.Context, id string, at time.Time) (ReviewRun, error)
	// Finish stores the result of a run (status done or failed).
	Finish(ctx context.Context, r ReviewRun) error
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
