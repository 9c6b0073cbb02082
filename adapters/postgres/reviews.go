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

func (r reviewRow) toPort() ports.ReviewRun {
	run := ports.ReviewRun{
		ID: r.ID, RepositoryID: r.RepositoryID, Status: review.RunStatus(r.Status),
		Title: r.Title, Description: r.Description, Diff: r.Diff, Files: r.Files,
		PromptVersion: r.PromptVersion.String, Findings: make([]review.Finding, 0, len(r.Findings)), Summary: r.Summary,
		Stats:     review.Stats{Mcp: r.Stats.Mcp.toDomain()},
		CreatedAt: r.CreatedAt, StartedAt: r.StartedAt.Time, FinishedAt: r.FinishedAt.Time,
	}
	if run.Files == nil {
		run.Files = map[string]string{}
	}
	for _, f := range r.Findings {
		run.Findings = append(run.Findings, review.Finding(f))
	}
	return run
}

// reviewRepo implements [ports.ReviewRepo] inside one tenant transaction.
type reviewRepo struct{ t *tenantTx }

// Insert stores r as a queued run and enqueues its job on the same
// transaction. r.ID is chosen by the caller and must be a UUID; the status
// and the result fields of r are ignored. A repository that is missing or
// belongs to another tenant is [ports.ErrNotFound]; a used id is
// [ports.ErrConflict].
func (rr reviewRepo) Insert(ctx context.Context, r ports.ReviewRun) error {
	if !isUUID(r.ID) {
		return fmt.Errorf("postgres: insert review: id %q is not a UUID", r.ID)
	}
	if !isUUID(r.RepositoryID) {
		return fmt.Errorf("postgres: insert review: repository: %w", ports.ErrNotFound)
	}
	files := r.Files
	if files == nil {
		files = map[string]string{}
	}
	row := reviewRow{
		ID: r.ID, TenantID: rr.t.tenantID, RepositoryID: r.RepositoryID, Status: string(review.Queued),
		Title: r.Title, Description: r.Description, Diff: r.Diff, Files: files,
		Findings: []findingRow{}, CreatedAt: r.CreatedAt,
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
	return enqueueReview(ctx, rr.t.tx.Tx, rr.t.tenantID, r.ID)
}

// Get returns a run of the tenant or [ports.ErrNotFound].
func (rr reviewRepo) Get(ctx context.Context, id string) (ports.ReviewRun, error) {
	if !isUUID(id) {
		return ports.ReviewRun{}, fmt.Errorf("postgres: get review: %w", ports.ErrNotFound)
	}
	var row reviewRow
	err := rr.t.db.NewSelect().Model(&row).Where("rv.id = ? AND rv.tenant_id = ?", id, rr.t.tenantID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.ReviewRun{}, fmt.Errorf("postgres: get review: %w", ports.ErrNotFound)
	}
	if err != nil {
		return ports.ReviewRun{}, fmt.Errorf("postgres: get review: %w", err)
	}
	return row.toPort(), nil
}

// Recent returns at most limit runs of a repository, newest first, without
// their diff and files; none for an id that is not a UUID.
func (rr reviewRepo) Recent(ctx context.Context, repositoryID string, limit int) ([]ports.ReviewRun, error) {
	if !isUUID(repositoryID) || limit <= 0 {
		return []ports.ReviewRun{}, nil
	}
	var rows []reviewRow
	err := rr.t.db.NewSelect().Model(&rows).
		ExcludeColumn("diff", "files").
		Where("rv.tenant_id = ? AND rv.repository_id = ?", rr.t.tenantID, repositoryID).
		OrderExpr("rv.created_at DESC, rv.id DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: recent reviews: %w", err)
	}
	out := make([]ports.ReviewRun, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.toPort())
	}
	return out, nil
}

// Start marks a queued or running run as running and returns it. A retry
// (the run is already running) keeps the time of the first start.
// [ports.ErrConflict] when the run is done or failed, [ports.ErrNotFound]
// when it is missing.
func (rr reviewRepo) Start(ctx context.Context, id string, at time.Time) (ports.ReviewRun, error) {
	if !isUUID(id) {
		return ports.ReviewRun{}, fmt.Errorf("postgres: start review: %w", ports.ErrNotFound)
	}
	var row reviewRow
	err := rr.t.db.NewUpdate().Model(&row).
		Set("status = ?", review.Running).
		Set("started_at = coalesce(rv.started_at, ?)", at).
		Where("rv.id = ? AND rv.tenant_id = ?", id, rr.t.tenantID).
		Where("rv.status IN (?, ?)", review.Queued, review.Running).
		Returning("*").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.ReviewRun{}, rr.missingOrFinished(ctx, "start review", id)
	}
	if err != nil {
		return ports.ReviewRun{}, fmt.Errorf("postgres: start review: %w", err)
	}
	return row.toPort(), nil
}

// Finish stores the result of a queued or running run: r.Status (done or
// failed), findings, summary, stats, prompt version and r.FinishedAt (the
// transaction's time when zero). A run that is already done or failed is
// [ports.ErrConflict] and keeps its result, so a late failure never
// overwrites a finished review; a missing run is [ports.ErrNotFound].
func (rr reviewRepo) Finish(ctx context.Context, r ports.ReviewRun) error {
	if !r.Status.Finished() {
		return fmt.Errorf("postgres: finish review: status %q is not %s or %s", r.Status, review.Done, review.Failed)
	}
	if !isUUID(r.ID) {
		return fmt.Errorf("postgres: finish review: %w", ports.ErrNotFound)
	}
	findings := make([]findingRow, 0, len(r.Findings))
	for _, f := range r.Findings {
		findings = append(findings, findingRow(f))
	}
	findingsJSON, err := json.Marshal(findings)
	if err != nil {
		return fmt.Errorf("postgres: finish review: findings: %w", err)
	}
	statsJSON, err := json.Marshal(statsRow{Mcp: newMcpStatsRow(r.Stats.Mcp)})
	if err != nil {
		return fmt.Errorf("postgres: finish review: stats: %w", err)
	}
	finishedAt := bun.NullTime{Time: r.FinishedAt}
	res, err := rr.t.db.NewUpdate().Model((*reviewRow)(nil)).
		Set("status = ?", r.Status).
		Set("findings = ?::jsonb", string(findingsJSON)).
		Set("summary = ?", r.Summary).
		Set("stats = ?::jsonb", string(statsJSON)).
		Set("prompt_version = nullif(?, '')", r.PromptVersion).
		Set("finished_at = coalesce(?, now())", finishedAt).
		Where("rv.id = ? AND rv.tenant_id = ?", r.ID, rr.t.tenantID).
		Where("rv.status IN (?, ?)", review.Queued, review.Running).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("postgres: finish review: %w", err)
	}
	n, err := rowsAffected(res)
	if err != nil {
		return fmt.Errorf("postgres: finish review: %w", err)
	}
	if n == 0 {
		return rr.missingOrFinished(ctx, "finish review", r.ID)
	}
	return nil
}

// missingOrFinished tells why a transition matched no row: the run is
// missing (ErrNotFound) or already finished (ErrConflict).
func (rr reviewRepo) missingOrFinished(ctx context.Context, op, id string) error {
	exists, err := rr.t.db.NewSelect().Table("review_runs").
		Where("id = ?", id).Where("tenant_id = ?", rr.t.tenantID).Exists(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("postgres: %s: %w", op, err)
	case exists:
		return fmt.Errorf("postgres: %s: run is finished: %w", op, ports.ErrConflict)
	default:
		return fmt.Errorf("postgres: %s: %w", op, ports.ErrNotFound)
	}
}
