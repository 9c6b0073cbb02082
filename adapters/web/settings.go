package web

import (
	"net/http"
	"strconv"

	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/settings"
)

// settingsForm is the tenant settings form as the user filled it in.
type settingsForm struct {
	RetentionDays string
	DebugPrompts  bool
	TTLHours      string
}

type settingsPage struct {
	Form  settingsForm
	Error *formError
	Saved bool
}

func (settingsPage) title() (string, string) { return "Tenant settings", "settings" }

func formOf(s settings.Settings) settingsForm {
	return settingsForm{RetentionDays: strconv.Itoa(s.RetentionDays()), DebugPrompts: s.DebugPrompts(), TTLHours: strconv.Itoa(s.PromptTTLHours())}
}

func (u *UI) settingsPage(w http.ResponseWriter, r *http.Request, c *caller) {
	s, err := u.d.GetSettings.Handle(r.Context(), c.Principal, accounts.GetSettings{})
	if err != nil {
		u.internal(w, r, c, err)
		return
	}
	u.render(w, r, http.StatusOK, "settings", c, settingsPage{Form: formOf(s), Saved: r.URL.Query().Get("done") == "saved"})
}

// formInt reads a number field; text that is not a number becomes -1,
// which the use case refuses with its own range reason.
func formInt(v string) *int {
	n, err := strconv.Atoi(v)
	if err != nil {
		n = -1
	}
	return &n
}

func (u *UI) putSettings(w http.ResponseWriter, r *http.Request, c *caller) {
	f := settingsForm{RetentionDays: r.PostForm.Get("retentionDays"), DebugPrompts: r.PostForm.Get("debugPrompts") == "on", TTLHours: r.PostForm.Get("ttlHours")}
	cmd := accounts.PutSettings{RetentionDays: formInt(f.RetentionDays), DebugPrompts: &f.DebugPrompts, TTLHours: formInt(f.TTLHours)}
	if _, err := u.d.PutSettings.Handle(r.Context(), c.Principal, cmd); err != nil {
		u.refused(w, r, c, err, "settings", settingsPage{Form: f, Error: newFormError(err, "save")})
		return
	}
	http.Redirect(w, r, "/ui/settings?done=saved", http.StatusSeeOther)
}

type promptsPage struct {
	ReviewID string
	Title    string
	Prompts  []reviews.Prompt
}

func (p promptsPage) title() (string, string) { return "Prompt log of " + p.Title, "reviews" }

// promptsPage shows a review's debug prompt log: every model request kept
// (redacted, decrypted for this page only), MCP results included, all of
// it escaped with invisible characters marked.
func (u *UI) promptsPage(w http.ResponseWriter, r *http.Request, c *caller) {
	run, err := u.d.GetReview.Handle(r.Context(), c.Principal, reviews.GetReview{ID: r.PathValue("id")})
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	prompts, err := u.d.Prompts.Handle(r.Context(), c.Principal, reviews.ListPrompts{ReviewID: run.ID()})
	if err != nil {
		u.refused(w, r, c, err, "message", nil)
		return
	}
	u.render(w, r, http.StatusOK, "prompts", c, promptsPage{ReviewID: run.ID(), Title: run.Title(), Prompts: prompts})
}
