package reviews

import (
	"context"
	"errors"
	"fmt"

	"github.com/codelotse/codelotse/domain/review"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/ports"
)

// SubmitReview queues a review of a repository (POST /v1/repositories/{id}/reviews).
type SubmitReview struct {
	RepositoryID string
	Title        string
	Description  string
	Diff         string
	Files        map[string]string
}

// Deps are the ports of the module's API use cases (submit and read
// reviews, read prompt logs); a run has [ReviewDeps]. Cipher is nil when
// no key ring is configured.
type Deps struct {
	Tenants ports.Tenants
	Cipher  app.Vault
	Clock   ports.Clock
	NewID   ports.NewID
}

// SubmitReviewHandler submits reviews. Safe for concurrent use.
type SubmitReviewHandler struct{ d Deps }

// NewSubmitReviewHandler returns a [SubmitReviewHandler].
func NewSubmitReviewHandler(d Deps) *SubmitReviewHandler { return &SubmitReviewHandler{d: d} }

// GetReview is the query of GET /v1/reviews/{id}.
type GetReview struct{ ID string }

// GetReviewHandler reads a review run. Safe for concurrent use.
type GetReviewHandler struct{ d Deps }

// NewGetReviewHandler returns a [GetReviewHandler].
func NewGetReviewHandler(d Deps) *GetReviewHandler { return &GetReviewHandler{d: d} }

// ListReviews is the query of a repository's recent reviews.
type ListReviews struct{ RepositoryID string }

// ListReviewsHandler lists a repository's recent reviews. Safe for
// concurrent use.
type ListReviewsHandler struct{ d Deps }

// NewListReviewsHandler returns a [ListReviewsHandler].
func NewListReviewsHandler(d Deps) *ListReviewsHandler { return &ListReviewsHandler{d: d} }

// ListReviewCalls is the query of a review's MCP call records.
type ListReviewCalls struct{ ReviewID string }

// ListReviewCallsHandler lists a review's MCP call records. Safe for
// concurrent use.
type ListReviewCallsHandler struct{ d Deps }

// NewListReviewCallsHandler returns a [ListReviewCallsHandler].
func NewListReviewCallsHandler(d Deps) *ListReviewCallsHandler { return &ListReviewCallsHandler{d: d} }

// Handle stores the run and enqueues its job in one transaction; a worker
// replica takes it. Not gated: a review runs with or without MCP context.
// The request's rules are the domain's (review.NewRun).
func (h *SubmitReviewHandler) Handle(ctx context.Context, p ports.Principal, cmd SubmitReview) (*review.Run, error) {
	repoID, ok := id.Parse(cmd.RepositoryID)
	if !ok {
		return nil, app.Fail(app.CodeNotFound, "no such repository")
	}
	run, err := review.NewRun(h.d.NewID(), repoID, review.Request{
		Title: cmd.Title, Description: cmd.Description, Diff: cmd.Diff, Files: cmd.Files,
	}, h.d.Clock.Now())
	if err != nil {
		return nil, requestInvalid(err)
	}
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if _, err := tx.Repositories().Get(ctx, repoID); err != nil {
			return app.NotFound(err, "repository")
		}
		return tx.Reviews().Insert(ctx, run)
	})
	if err != nil {
		return nil, err
	}
	return run, nil
}

// requestFields are the fields of a review request that review.NewRun
// names in its errors.
var requestFields = map[string]bool{"title": true, "diff": true, "files": true}

// requestInvalid is validation_failed with NewRun's reasons for the
// request's fields; any other refusal (the id or time this handler chose)
// is an internal error.
func requestInvalid(err error) error {
	fields := map[string]string{}
	for _, e := range app.Flatten(err) {
		var fe *field.Error
		if !errors.As(e, &fe) || !requestFields[fe.Field] {
			return fmt.Errorf("new review run: %w", err)
		}
		fields[fe.Field] = fe.Reason
	}
	return app.Invalid(fields)
}

// Handle reads a review run; another tenant's id is not found.
func (h *GetReviewHandler) Handle(ctx context.Context, p ports.Principal, q GetReview) (*review.Run, error) {
	id, ok := id.Parse(q.ID)
	if !ok {
		return nil, app.Fail(app.CodeNotFound, "no such review")
	}
	var run *review.Run
	err := h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		run, err = tx.Reviews().Get(ctx, id)
		return err
	})
	if errors.Is(err, ports.ErrNotFound) {
		return nil, app.Fail(app.CodeNotFound, "no such review")
	}
	return run, err
}

// Limits of the review pages: runs listed per repository, call records
// shown per run (a run makes at most 20 calls; blocked records add to them).
const (
	RecentReviews     = 50
	maxCallsPerReview = 200
)

// Handle lists a repository's latest runs ([RecentReviews], newest first,
// without diff and files); not_found for a repository the tenant does not
// have.
func (h *ListReviewsHandler) Handle(ctx context.Context, p ports.Principal, q ListReviews) ([]*review.Run, error) {
	repoID, ok := id.Parse(q.RepositoryID)
	if !ok {
		return nil, app.Fail(app.CodeNotFound, "no such repository")
	}
	var out []*review.Run
	err := h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if _, err := tx.Repositories().Get(ctx, repoID); err != nil {
			return app.NotFound(err, "repository")
		}
		var err error
		out, err = tx.Reviews().Recent(ctx, repoID, RecentReviews)
		return err
	})
	return out, err
}

// Handle lists the tool-call records of a run, oldest first (counts and
// sizes only, like every call record); not_found for an unknown run.
func (h *ListReviewCallsHandler) Handle(ctx context.Context, p ports.Principal, q ListReviewCalls) ([]ports.ToolCall, error) {
	rid, ok := id.Parse(q.ReviewID)
	if !ok {
		return nil, app.Fail(app.CodeNotFound, "no such review")
	}
	var out []ports.ToolCall
	err := h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if _, err := tx.Reviews().Get(ctx, rid); err != nil {
			if errors.Is(err, ports.ErrNotFound) {
				return app.Fail(app.CodeNotFound, "no such review")
			}
			return err
		}
		var err error
		out, err = tx.Calls().ForReview(ctx, rid, maxCallsPerReview)
		return err
	})
	return out, err
}
