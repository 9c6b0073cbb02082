package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/ports"
)

// reviewRow is a row of review_runs.
type reviewRow struct {
	bun.BaseModel `bun:"table:review_runs,alias:rv"`

	ID            string            `bun:"id,pk,type:uuid"`
	TenantID      string            `bun:"tenant_id,type:uuid"`
	RepositoryID  string            `bun:"repository_id,type:uuid"`
	Status        string            `bun:"status"`
	Title         string            `bun:"title"`
	Description   string            `bun:"description"`
	Diff          string            `bun:"diff"`
	Files         map[string]string `bun:"files,type:jsonb,notnull"`
	PromptVersion sql.NullString    `bun:"prompt_version"`
	Findings      []findingRow      `bun:"findings,type:jsonb,notnull"`
	Summary       string            `bun:"summary"`
	Stats         statsRow          `bun:"stats,type:jsonb,notnull"`
	CreatedAt     time.Time         `bun:"created_at,nullzero"`
	StartedAt     bun.NullTime      `bun:"started_at"`
	FinishedAt    bun.NullTime      `bun:"finished_at"`
}

// findingRow, statsRow and mcpStatsRow are the JSONB of review_runs'
// findings and stats.
type findingRow struct {
	Path     string `json:"path"`
	Line     int    `json:"line"`
	Title    string `json:"title"`
	Body     string `json:"body"`
	Evidence string `json:"evidence"`
}

type statsRow struct {
	Mcp mcpStatsRow `json:"mcp"`
}

type mcpStatsRow struct {
	Prompt  *string            `json:"prompt"`
	Calls   int                `json:"calls"`
	Bytes   int                `json:"bytes"`
	Blocked int                `json:"blocked"`
	Servers []serverOutcomeRow `json:"servers,omitempty"`
}

// serverOutcomeRow is one element of stats.mcp.servers (runs finished
// before it was kept have none).
type serverOutcomeRow struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Offered bool   `json:"offered"`
	Reason  string `json:"reason,omitempty"`
}

func newMcpStatsRow(m review.McpStats) mcpStatsRow {
	row := mcpStatsRow{Prompt: m.Prompt, Calls: m.Calls, Bytes: m.Bytes, Blocked: m.Blocked}
	for _, s := range m.Servers {
		row.Servers = append(row.Servers, serverOutcomeRow{ID: s.ID, Name: s.Name, Offered: s.Offered, Reason: string(s.Reason)})
	}
	return row
}

func (m mcpStatsRow) toDomain() review.McpStats {
	out := review.McpStats{Prompt: m.Prompt, Calls: m.Calls, Bytes: m.Bytes, Blocked: m.Blocked}
	for _, s := range m.Servers {
		out.Servers = append(out.Servers, review.ServerOutcome{ID: s.ID, Name: s.Name, Offered: s.Offered, Reason: review.ServerReason(s.Reason)})
	}
	return out
}

// toDomain loads a row read whole through the domain's rules: a row that
// breaks them is an error, never a run.
func (r reviewRow) toDomain() (*review.Run, error) {
	return review.UnmarshalRunFromDatabase(r.ID, r.RepositoryID, review.RunStatus(r.Status),
		review.Request{Title: r.Title, Description: r.Description, Diff: r.Diff, Files: r.Files},
		r.result(), r.CreatedAt, r.StartedAt.Time, r.FinishedAt.Time)
}

// toListed loads a row read without its diff and files (Recent) through
// the same rules but the diff's.
func (r reviewRow) toListed() (*review.Run, error) {
	return review.UnmarshalListedRunFromDatabase(r.ID, r.RepositoryID, review.RunStatus(r.Status),
		r.Title, r.Description, r.result(), r.CreatedAt, r.StartedAt.Time, r.FinishedAt.Time)
}

func (r reviewRow) result() review.Result {
	findings := make([]review.Finding, 0, len(r.Findings))
	for _, f := range r.Findings {
		findings = append(findings, review.Finding(f))
	}
	return review.Result{PromptVersion: r.PromptVersion.String, Findings: findings, Summary: r.Summary,
		Stats: review.Stats{Mcp: r.Stats.Mcp.toDomain()}}
}

// reviewRepo implements [ports.ReviewRepo] inside one tenant transaction.
type reviewRepo struct{ t *tenantTx }

// Insert stores r's request as a queued run and enqueues its job on the
// same transaction; r's state and result are not stored. A repository
// that is missing or belongs to another tenant is [ports.ErrNotFound]; a
// used id is [ports.ErrConflict].
func (rr reviewRepo) Insert(ctx context.Context, r *review.Run) error {
	if !isUUID(r.ID()) {
		return fmt.Errorf("postgres: insert review: id %q is not a UUID", r.ID())
	}
	if !isUUID(r.RepositoryID()) {
		return fmt.Errorf("postgres: insert review: repository: %w", ports.ErrNotFound)
	}
	req := r.Request()
	row := reviewRow{
		ID: r.ID(), TenantID: rr.t.tenantID, RepositoryID: r.RepositoryID(), Status: string(review.Queued),
		Title: req.Title, Description: req.Description, Diff: req.Diff, Files: req.Files,
		Findings: []findingRow{}, CreatedAt: r.CreatedAt(),
	}
	err := inSavepoint(ctx, rr.t.tx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewInsert().Model(&row).
			ExcludeColumn("prompt_version", "summary", "stats", "started_at", "finished_at").
			Returning("NULL").Exec(ctx)
		return err
	})
	switch code, _ := pgError(err); {
	case code == codeUniqueViolation:
		return fmt.Errorf("postgres: insert review: %w", ports.ErrConflict)
	case code == codeForeignKeyViolation:
		return fmt.Errorf("postgres: insert review: repository: %w", ports.ErrNotFound)
	case err != nil:
		return fmt.Errorf("postgres: insert review: %w", err)
	}
	if rr.t.tx.Tx == nil {
		return errReadScope
	}
	return enqueueReview(ctx, rr.t.tx.Tx, rr.t.tenantID, r.ID())
}

// Get returns a run of the tenant or [ports.ErrNotFound]; a row that
// breaks the run's rules is an error (review.ErrInvalidStoredRun).
func (rr reviewRepo) Get(ctx context.Context, id string) (*review.Run, error) {
	if !isUUID(id) {
		return nil, fmt.Errorf("postgres: get review: %w", ports.ErrNotFound)
	}
	var row reviewRow
	err := rr.t.db.NewSelect().Model(&row).Where("rv.id = ? AND rv.tenant_id = ?", id, rr.t.tenantID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("postgres: get review: %w", ports.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: get review: %w", err)
	}
	run, err := row.toDomain()
	if err != nil {
		return nil, fmt.Errorf("postgres: get review: %w", err)
	}
	return run, nil
}

// Recent returns at most limit runs of a repository, newest first, without
// their diff and files; none for an id that is not a UUID.
func (rr reviewRepo) Recent(ctx context.Context, repositoryID string, limit int) ([]*review.Run, error) {
	if !isUUID(repositoryID) || limit <= 0 {
		return []*review.Run{}, nil
	}
	var rows []reviewRow
	err := rr.t.db.NewSelect().Model(&rows).
		ExcludeColumn("diff", "files").
		Where("rv.tenant_id = ? AND rv.repository_id = ?", rr.t.tenantID, repositoryID).
		OrderExpr("rv.created_at DESC, rv.id DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: recent reviews: %w", err)
	}
	out := make([]*review.Run, 0, len(rows))
	for _, r := range rows {
		run, err := r.toListed()
		if err != nil {
			return nil, fmt.Errorf("postgres: recent reviews: %w", err)
		}
		out = append(out, run)
	}
	return out, nil
}

// Start stores the start of r, which review.Run.Start made running: the
// row becomes running with r's start (never before the row's creation)
// unless it has one: a retry keeps the first, and so does an attempt that
// read the run queued while another started it. It returns the start the
// row keeps (RETURNING), which the caller gives r. The update matches only
// a queued or running row, whatever r says: [ports.ErrConflict] when the
// run is done or failed (another attempt finished it), [ports.ErrNotFound]
// when it is missing.
func (rr reviewRepo) Start(ctx context.Context, r *review.Run) (time.Time, error) {
	if r.Status() != review.Running {
		return time.Time{}, fmt.Errorf("postgres: start review: status %q is not %s", r.Status(), review.Running)
	}
	if !isUUID(r.ID()) {
		return time.Time{}, fmt.Errorf("postgres: start review: %w", ports.ErrNotFound)
	}
	var started time.Time
	err := rr.t.db.NewUpdate().Model((*reviewRow)(nil)).
		Set("status = ?", review.Running).
		Set("started_at = coalesce(rv.started_at, greatest(?, rv.created_at))", r.StartedAt()).
		Where("rv.id = ? AND rv.tenant_id = ?", r.ID(), rr.t.tenantID).
		Where("rv.status IN (?, ?)", review.Queued, review.Running).
		Returning("started_at").
		Scan(ctx, &started)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, rr.notMoved(ctx, "start review", r.ID())
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("postgres: start review: %w", err)
	}
	return started, nil
}

// Finish stores the end of r, which review.Run.Complete or review.Run.Fail
// finished: its status, findings, summary, stats, prompt version and
// finish time, and its start when the row has none; never its request.
// The finish stored is r's, or the row's creation or start when that is
// later: r may hold a start of its own while the row keeps another
// attempt's, read on another replica's clock, and the row keeps its order
// (created ≤ started ≤ finished). The update matches only a row r's
// transition may leave: a done run only a running row (a run is never
// done without running), a failed run a queued or running row (a job may
// give up before it ran). A run that is already done or failed is
// [ports.ErrConflict] and keeps its result, so a late failure never
// overwrites a finished review, and so is a queued row under a done run;
// a missing run is [ports.ErrNotFound].
func (rr reviewRepo) Finish(ctx context.Context, r *review.Run) error {
	if !r.Status().Finished() {
		return fmt.Errorf("postgres: finish review: status %q is not %s or %s", r.Status(), review.Done, review.Failed)
	}
	if !isUUID(r.ID()) {
		return fmt.Errorf("postgres: finish review: %w", ports.ErrNotFound)
	}
	// The stored statuses r's transition leaves.
	from := []review.RunStatus{review.Queued, review.Running}
	if r.Status() == review.Done {
		from = []review.RunStatus{review.Running}
	}
	result := r.Result()
	findings := make([]findingRow, 0, len(result.Findings))
	for _, f := range result.Findings {
		findings = append(findings, findingRow(f))
	}
	findingsJSON, err := json.Marshal(findings)
	if err != nil {
		return fmt.Errorf("postgres: finish review: findings: %w", err)
	}
	statsJSON, err := json.Marshal(statsRow{Mcp: newMcpStatsRow(result.Stats.Mcp)})
	if err != nil {
		return fmt.Errorf("postgres: finish review: stats: %w", err)
	}
	start := bun.NullTime{Time: r.StartedAt()}
	res, err := rr.t.db.NewUpdate().Model((*reviewRow)(nil)).
		Set("status = ?", r.Status()).
		Set("findings = ?::jsonb", string(findingsJSON)).
		Set("summary = ?", result.Summary).
		Set("stats = ?::jsonb", string(statsJSON)).
		Set("prompt_version = nullif(?, '')", result.PromptVersion).
		Set("started_at = coalesce(rv.started_at, ?)", start).
		// Every expression reads the row as it was: the start it keeps is
		// coalesce(rv.started_at, r's).
		Set("finished_at = greatest(?, rv.created_at, coalesce(rv.started_at, ?))", r.FinishedAt(), start).
		Where("rv.id = ? AND rv.tenant_id = ?", r.ID(), rr.t.tenantID).
		Where("rv.status IN (?)", bun.In(from)).
		Exec(ctx)
	return rr.transitioned(ctx, "finish review", r.ID(), res, err)
}

// transitioned reads the outcome of a transition's update: no row
// matched is a missing run or one the transition may not leave.
func (rr reviewRepo) transitioned(ctx context.Context, op, id string, res sql.Result, err error) error {
	if err != nil {
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
	n, err := rowsAffected(res)
	if err != nil {
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
	if n == 0 {
		return rr.notMoved(ctx, op, id)
	}
	return nil
}

// notMoved tells why a transition matched no row: the run is missing
// (ErrNotFound), or its stored status is one the transition may not
// leave (ErrConflict: finished, or queued under a done run).
func (rr reviewRepo) notMoved(ctx context.Context, op, id string) error {
	var status string
	err := rr.t.db.NewSelect().Table("review_runs").Column("status").
		Where("id = ?", id).Where("tenant_id = ?", rr.t.tenantID).Scan(ctx, &status)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("postgres: %s: %w", op, ports.ErrNotFound)
	case err != nil:
		return fmt.Errorf("postgres: %s: %w", op, err)
	default:
		return fmt.Errorf("postgres: %s: the run is %s: %w", op, status, ports.ErrConflict)
	}
}
