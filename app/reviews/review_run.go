package reviews

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/domain/server"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/budget"
	"github.com/codelotse/codelotse/domain/egress"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/domain/untrusted"
	"github.com/codelotse/codelotse/ports"
)

// ReviewDeps are the ports a review run needs.
type ReviewDeps struct {
	Tenants   ports.Tenants
	Cipher    app.Vault
	Connector ports.MCPConnector
	Model     ports.Model
	Scanner   ports.SecretScanner
	Metrics   ports.Metrics
	Clock     ports.Clock
	Gates     app.Gates
	// Allowed is the operator's allowlist of MCP server URLs: a server
	// outside it is skipped as disabled, its credential never opened.
	Allowed server.AllowedURLs
	// CallCap is the instance's cap of a server's calls-per-minute limit
	// (QUAVON_MCP_MAX_CALLS_PER_MINUTE): a call is held to the lower of
	// the two; the zero value is 600.
	CallCap server.CallCap
	// Rand feeds the untrusted wrapper's boundaries (crypto/rand.Reader).
	Rand ports.Random
	// Warn logs a warning with fields that never hold a URL, an argument,
	// a result or a credential.
	Warn ports.Warn
	// McpSetupTimeout bounds connecting to a run's servers and listing
	// their tools, all together; zero is 30 s. Tests shorten it.
	McpSetupTimeout time.Duration
}

// ReviewRunner runs queued reviews; the worker calls it.
type ReviewRunner struct{ d ReviewDeps }

// NewReviewRunner returns the runner.
func NewReviewRunner(d ReviewDeps) *ReviewRunner { return &ReviewRunner{d: d} }

// RunReview runs one review: it marks the run running, gathers the MCP
// context when the gate allows it, runs the pipeline and stores the
// result. MCP never fails a review: a server that cannot be used is
// skipped. Every MCP session is closed before RunReview returns, on
// success, error, panic and cancellation.
func (h *ReviewRunner) RunReview(ctx context.Context, tenantID, reviewID string) error {
	var run *review.Run
	err := h.d.Tenants.InTenant(ctx, tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		if run, err = tx.Reviews().Get(ctx, reviewID); err != nil {
			return err
		}
		if err := run.Start(h.d.Clock.Now()); err != nil {
			return err
		}
		// Another attempt may have started the run since it was read
		// (on another replica's clock): the run takes the start the
		// store keeps, so its finish is judged against that one.
		started, err := tx.Reviews().Start(ctx, run)
		if err != nil {
			return err
		}
		return run.TakeStoredStart(started)
	})
	if errors.Is(err, review.ErrRunFinished) || errors.Is(err, ports.ErrConflict) || errors.Is(err, ports.ErrNotFound) {
		return nil // finished by an earlier attempt, or deleted: nothing to do
	}
	if err != nil {
		return fmt.Errorf("start review: %w", err)
	}

	mcp := &mcpRun{deps: h.d, tenantID: tenantID, reviewID: reviewID}
	defer mcp.close()
	req := run.Request()
	tools := h.mcpContext(ctx, mcp, runRef{ID: run.ID(), RepositoryID: run.RepositoryID(), Request: req})
	// Every model request goes through the debug prompt log, which keeps
	// it only while the tenant's setting is on.
	model := newPromptRecorder(h.d, tenantID, reviewID)
	out, err := (&Pipeline{Model: model}).Run(ctx, ReviewPipelineInput{
		Title: req.Title, Description: req.Description, Diff: req.Diff, Files: req.Files, ExternalTools: tools,
	})
	if err != nil {
		return err
	}
	mcp.close()
	stats := review.Stats{Mcp: mcp.stats(ctx, out.McpPrompt)}
	err = run.Complete(h.d.Clock.Now(), review.Result{
		PromptVersion: ReviewPromptVersion, Findings: out.Findings, Summary: out.Summary, Stats: stats,
	})
	if err != nil {
		return fmt.Errorf("complete review: %w", err)
	}
	err = h.d.Tenants.InTenant(context.WithoutCancel(ctx), tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Reviews().Finish(ctx, run)
	})
	if errors.Is(err, ports.ErrConflict) || errors.Is(err, ports.ErrNotFound) {
		return nil // another attempt finished it, or it was deleted
	}
	return err
}

// runRef is what the MCP context needs of a run: its id, its
// repository's and its request (what the model reads first).
type runRef struct {
	ID, RepositoryID string
	Request          review.Request
}

// mcpContext returns the external tools of a run, or none. The gate comes
// first: with the feature not signed off or disabled on the instance it
// returns before reading anything; with the repository's policy off, no
// server, or a public repository (as it is now, not when the policy was
// set) it returns before touching the MCP tables or the network. Any
// failure past that point means no MCP context for this run, with a
// warning: a review never fails because of MCP (a policy that does not
// parse included: condition 2 of the threat analysis).
func (h *ReviewRunner) mcpContext(ctx context.Context, mcp *mcpRun, run runRef) []ExternalTool {
	if !h.d.Gates.SignedOff || !h.d.Gates.Instance.Allowed() {
		mcp.gated = true
		return nil
	}
	skip := func(why string, err error) []ExternalTool {
		fields := map[string]string{"review_id": run.ID}
		if err != nil {
			fields["error"] = err.Error()
		}
		h.d.warn("mcp context skipped: "+why, fields)
		h.d.Metrics.McpCall(review.CallUnavailable)
		return nil
	}
	var (
		eff  policy.Effective
		repo *repository.Repository
	)
	err := h.d.Tenants.InTenant(ctx, mcp.tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		if repo, err = tx.Repositories().Get(ctx, run.RepositoryID); err != nil {
			return err
		}
		stored, ok, err := tx.Policies().Repository(ctx, run.RepositoryID)
		if err != nil {
			return err
		}
		if !ok {
			stored = app.InheritSection()
		}
		def, err := tx.Policies().Default(ctx)
		if err != nil {
			return err
		}
		eff = policy.Merge(def, stored)
		return nil
	})
	if err != nil {
		return skip("the policy cannot be read", err)
	}
	if !gate.EffectiveMcpContext(eff, repo.Visibility(), h.d.Gates.SignedOff, h.d.Gates.Instance.Allowed()) {
		return nil
	}
	usage, err := mcp.usage(ctx)
	if err != nil {
		return skip("the run's call records cannot be read", err)
	}
	// The budget is the run's, not the attempt's: a retried job continues it.
	if mcp.budget, err = budget.ResumeRunBudget(eff.MaxCalls(), usage.Reserved, usage.Bytes); err != nil {
		return skip("invalid call budget", err)
	}
	if mcp.wrapper, err = untrusted.NewWrapper(h.d.Rand); err != nil {
		return skip("no randomness for the untrusted wrapper", err)
	}
	mcp.taint = egress.NewTaint()
	mcp.seeRequest(run.Request)
	return mcp.openTools(ctx, mcp.loadServers(ctx, eff.Servers()))
}

// FailReview marks a run failed after its last attempt. A run that is
// gone or already finished needs nothing.
func (h *ReviewRunner) FailReview(ctx context.Context, tenantID, reviewID string) error {
	err := h.d.Tenants.InTenant(ctx, tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		run, err := tx.Reviews().Get(ctx, reviewID)
		if err != nil {
			return err
		}
		if err := run.Fail(h.d.Clock.Now()); err != nil {
			return err
		}
		return tx.Reviews().Finish(ctx, run)
	})
	if errors.Is(err, review.ErrRunFinished) || errors.Is(err, ports.ErrNotFound) || errors.Is(err, ports.ErrConflict) {
		return nil
	}
	return err
}
