package web

import (
	"net/http"
	"strconv"

	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/app/review"
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
		if _, err := u.d.GetReview.Handle(r.Context(), c.Principal, review.GetReview{ID: id}); err != nil {
			u.refused(w, r, c, err, "reviews", reviewsPage{ID: id})
			return
		}
		http.Redirect(w, r, "/ui/reviews/"+id, http.StatusSeeOther)
		return
	}
	u.render(w, r, http.StatusOK, "reviews", c, reviewsPage{})
}

type reviewPage struct {
	Run   ports.ReviewRun
	Repo  ports.Repository
	Calls []ports.ToolCall
}

func (p reviewPage) title() (string, string) { return "Review " + p.Run.Title, "reviews" }

func (u *UI) reviewPage(w http.ResponseWriter, r *http.Request, c *caller) {
	run, err := u.d.GetReview.Handle(r.Context(), c.Principal, review.GetReview{ID: r.PathValue("id")})
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	calls, err := u.d.ListReviewCalls.Handle(r.Context(), c.Principal, review.ListReviewCalls{ReviewID: run.ID})
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	p := reviewPage{Run: run, Calls: calls}
	if repo, err := u.d.GetRepository.Handle(r.Context(), c.Principal, repositories.GetRepository{ID: run.RepositoryID}); err == nil {
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
