package web

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/ports"
)

type reviewsPage struct {
	ID    string
	Error *formError
}

func (reviewsPage) title() (string, string) { return "Reviews", "reviews" }

// reviewsPage opens a review by id; a repository's page lists its latest
// reviews.
func (u *UI) reviewsPage(w http.ResponseWriter, r *http.Request, c *caller) {
	if id := r.URL.Query().Get("id"); id != "" {
		if _, err := u.d.GetReview.Handle(r.Context(), c.Principal, reviews.GetReview{ID: id}); err != nil {
			u.refused(w, r, c, err, "reviews", reviewsPage{ID: id})
			return
		}
		http.Redirect(w, r, "/ui/reviews/"+id, http.StatusSeeOther)
		return
	}
	u.render(w, r, http.StatusOK, "reviews", c, reviewsPage{})
}

type reviewPage struct {
	Run     *review.Run
	Repo    *repository.Repository // nil when it cannot be read
	Calls   []callRow
	Servers []serverOutcome
}

// serverOutcome is one server of the run with the tools that were not
// offered because they changed after their approval (from the run's
// call records).
type serverOutcome struct {
	review.ServerOutcome
	Changed []string
}

// changedTool reports whether a record is a tool blocked at listing
// because it changed (see callWords).
func changedTool(c ports.ToolCall) bool {
	return c.Status == review.CallBlocked && c.ArgumentsHash == ""
}

// callRow is one call record of a review with its server's name and the
// outcome in words.
type callRow struct {
	ports.ToolCall
	Server string
	Reason string
}

// serverReasonWords say why a review skipped a server.
var serverReasonWords = map[review.ServerReason]string{
	review.ServerUnreachable:   "the server could not be reached (or did not answer in time, or did not speak MCP as expected)",
	review.ServerUnauthorized:  "the server refused the credential; an admin must fix the authentication",
	review.ServerNoPinnedTools: "none of its allowlisted tools could be offered (none is pinned, or each changed or is gone from the server)",
	review.ServerDisabled:      "the server is disabled",
}

// callWords says in words what became of one call. The three kinds of
// blocked records are told apart by what they carry: a changed tool is
// recorded when the tools are listed, before any call (no arguments
// hash); arguments that look like a secret are never sent (no response);
// a result with a secret is dropped after it arrived.
func callWords(c ports.ToolCall) string {
	switch c.Status {
	case review.CallOK:
		return "answered; the result reached the model marked as untrusted context"
	case review.CallError:
		return "the server answered with an error, or the call failed"
	case review.CallBlocked:
		switch {
		case c.ArgumentsHash == "":
			return "not offered: the tool changed after its approval and is blocked until an admin approves it again"
		case c.ResponseBytes == 0:
			return "blocked: the arguments looked like a secret or personal data; nothing was sent"
		default:
			return "blocked: the result contained a secret and was dropped"
		}
	case review.CallTooLarge:
		return "dropped: the answer was larger than allowed"
	case review.CallUnavailable:
		return "failed: the server could not be reached during the call"
	case review.CallBudgetExhausted:
		return "not sent: the review had used up its calls or bytes"
	case review.CallInvalidArguments:
		return "not sent: the arguments did not match the tool's input schema"
	case review.CallRateLimited:
		return "rate limited: the server asked to wait (429); no more calls went to it until the wait passed"
	}
	return string(c.Status)
}

// removedWords says how many invisible characters a call's result lost
// before the model read it; nothing when none.
func removedWords(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "; 1 invisible character removed"
	}
	return "; " + strconv.Itoa(n) + " invisible characters removed"
}

func (p reviewPage) title() (string, string) { return "Review " + p.Run.Title(), "reviews" }

func (u *UI) reviewPage(w http.ResponseWriter, r *http.Request, c *caller) {
	run, err := u.d.GetReview.Handle(r.Context(), c.Principal, reviews.GetReview{ID: r.PathValue("id")})
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	calls, err := u.d.ListReviewCalls.Handle(r.Context(), c.Principal, reviews.ListReviewCalls{ReviewID: run.ID()})
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	outcomes := run.Stats().Mcp.Servers
	names := make(map[string]string, len(outcomes))
	for _, o := range outcomes {
		names[o.ID] = o.Name
	}
	p := reviewPage{Run: run, Calls: make([]callRow, 0, len(calls))}
	changed := map[string][]string{}
	for _, cl := range calls {
		p.Calls = append(p.Calls, callRow{ToolCall: cl, Server: names[cl.ServerID], Reason: callWords(cl) + removedWords(cl.RemovedCharacters)})
		if changedTool(cl) && !slices.Contains(changed[cl.ServerID], cl.Tool) {
			changed[cl.ServerID] = append(changed[cl.ServerID], cl.Tool)
		}
	}
	for _, o := range outcomes {
		p.Servers = append(p.Servers, serverOutcome{ServerOutcome: o, Changed: changed[o.ID]})
	}
	if repo, err := u.d.GetRepository.Handle(r.Context(), c.Principal, repositories.GetRepository{ID: run.RepositoryID()}); err == nil {
		p.Repo = repo
	}
	u.render(w, r, http.StatusOK, "review", c, p)
}

type auditPage struct {
	Events []ports.AuditEvent
	Page   int
	More   bool
}

func (auditPage) title() (string, string) { return "Audit log", "audit" }

func (u *UI) auditPage(w http.ResponseWriter, r *http.Request, c *caller) {
	n := 1
	if q := r.URL.Query().Get("page"); q != "" {
		var err error
		if n, err = strconv.Atoi(q); err != nil {
			n = 0
		}
	}
	events, more, err := u.d.AuditPage.Handle(r.Context(), c.Principal, accounts.AuditPage{Page: n - 1})
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	u.render(w, r, http.StatusOK, "audit", c, auditPage{Events: events, Page: n, More: more})
}
