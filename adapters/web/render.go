package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
	"github.com/rs/zerolog"
	"github.com/rs/zerolog/hlog"
)

// pageNames are the files in templates/ besides layout.html and
// components.html, one per page.
var pageNames = []string{
	"login", "message", "servers", "server_new", "server", "server_delete",
	"repositories", "repository", "defaults", "reviews", "review", "audit", "settings", "prompts", "tokens",
	"oauth_continue", "oauth_authorize",
}

// parsePages parses each page with the layout and the shared components.
func parsePages() (map[string]*template.Template, error) {
	out := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/components.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// layoutData is what layout.html gets: the caller, the notice and the
// page's own data in .Page.
type layoutData struct {
	Title  string
	Nav    string
	User   *userView
	Notice *noticeView
	// Disabled is why MCP forms are disabled ("" when they are not): the
	// notice's heading.
	Disabled string
	CSRF     string
	Page     any
}

type userView struct {
	TenantID     string
	TenantManage bool
	RepoManage   bool
}

// noticeView is the sign-off notice of the user guide, shown on every
// page while MCP context is not signed off or the instance disables it.
type noticeView struct {
	Code    string
	Heading string
	Text    string
}

// titled pages give their title through this interface.
type titled interface{ title() (title, nav string) }

func (u *UI) notice(r *http.Request, c *caller) *noticeView {
	var p ports.Principal
	if c != nil {
		p = c.Principal
	}
	st := u.d.Status.Handle(r.Context(), p)
	switch {
	case !st.SignedOff:
		return &noticeView{Code: string(app.CodeNotSignedOff), Heading: "Awaiting security sign-off",
			Text: "MCP context is built but inert until the maintainer signs the threat analysis. Until then this interface shows this notice, " +
				"changes to MCP servers and policies are refused, and reviews never contact an MCP server."}
	case !st.Instance.Allowed():
		return &noticeView{Code: string(app.CodeInstanceDisabled), Heading: "MCP context is disabled on this instance",
			Text: "The operator has not allowed MCP context (QUAVON_MCP_CONTEXT is not \"allowed\"). Changes to MCP servers and policies are refused, " +
				"and reviews never contact an MCP server. Deleting a server is always possible."}
	}
	return nil
}

// render writes a page. Templates execute into a buffer first, so a
// template error never leaves half a page.
func (u *UI) render(w http.ResponseWriter, r *http.Request, status int, name string, c *caller, data any) {
	p, ok := u.pages[name]
	if !ok {
		u.logFor(r).Error().Str("page", name).Msg("web: no such page template")
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	ld := layoutData{Page: data, Notice: u.notice(r, c)}
	if ld.Notice != nil {
		ld.Disabled = ld.Notice.Heading
	}
	if t, ok := data.(titled); ok {
		ld.Title, ld.Nav = t.title()
	}
	if c != nil {
		ld.User = &userView{TenantID: c.Principal.TenantID, TenantManage: c.can(app.PermTenantManage), RepoManage: c.can(app.PermRepoManage)}
		ld.CSRF = c.csrf
	}
	var buf bytes.Buffer
	if err := p.Execute(&buf, ld); err != nil {
		u.logFor(r).Error().Err(err).Str("page", name).Msg("web: render failed")
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// internal logs err and shows a page without its details.
func (u *UI) internal(w http.ResponseWriter, r *http.Request, c *caller, err error) {
	u.logFor(r).Error().Err(err).Str("route", r.Pattern).Msg("web: request failed")
	if e := app.AsError(err); e.Code == app.CodeUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
		u.render(w, r, http.StatusServiceUnavailable, "message", c, messagePage{Heading: "Unavailable",
			Text: codeWords[app.CodeUnavailable]})
		return
	}
	u.render(w, r, http.StatusInternalServerError, "message", c, messagePage{Heading: "Something went wrong",
		Text: "The request failed on our side. It has been logged; try again later."})
}

type messagePage struct {
	Heading string
	Text    string
}

func (m messagePage) title() (string, string) { return m.Heading, "" }

// formError is a refusal of a use case as a page shows it: the contract's
// code and message, and reasons per field. Non-field codes are shown next
// to the field or action they concern (see fieldOfCode).
type formError struct {
	Code       string
	Message    string
	Fields     map[string]string
	RetryAfter int
}

// fieldOfCode places refusals that name no field next to the input they
// concern; the rest go next to the form's action.
var fieldOfCode = map[app.Code]string{
	app.CodeNameTaken:               "name",
	app.CodeEndpointNotPublic:       "url",
	app.CodeAcknowledgementRequired: "acknowledged",
	app.CodeCredentialRequired:      "auth",
	app.CodeKeysUnavailable:         "auth",
	app.CodeUnknownServer:           "mcp.servers",
	app.CodePublicRepository:        "mcp.mode",
	app.CodeUnauthenticated:         "token",
}

// newFormError turns a use case's error into a formError; action is the
// field key of the form's button, where other refusals are shown.
func newFormError(err error, action string) *formError {
	e := app.AsError(err)
	fe := &formError{Code: string(e.Code), Message: e.Message, Fields: map[string]string{}}
	if e.Code == app.CodeInternal {
		fe.Message = "internal error"
	}
	if e.RetryAfter > 0 {
		fe.RetryAfter = int(math.Ceil(e.RetryAfter.Seconds()))
	}
	switch field, ok := fieldOfCode[e.Code]; {
	case e.Code == app.CodeValidationFailed:
		for k, v := range e.Fields {
			fe.Fields[k] = v
		}
	case ok:
		fe.Fields[field] = e.Message
	default:
		fe.Fields[action] = e.Message
	}
	return fe
}

// Field returns the reason for one field ("" when none); nil-safe.
func (f *formError) Field(name string) string {
	if f == nil {
		return ""
	}
	return f.Fields[name]
}

// fieldError is a field's reason in words and the id its input's
// aria-describedby names.
type fieldError struct {
	ID   string
	Text string
}

// Said is the reason for one field in words (nil when none): the
// contract's reason said as a sentence (sayField), or the refusal's words
// for a reason shown next to a button.
func (f *formError) Said(name string) *fieldError {
	reason := f.Field(name)
	if reason == "" {
		return nil
	}
	text := sayField(name, reason)
	if app.Code(f.Code) != app.CodeValidationFailed && reason == f.Message {
		text = f.Words() // a refusal placed next to its field or button
	}
	return &fieldError{ID: "err-" + strings.NewReplacer(".", "-", "[", "-", "]", "").Replace(name), Text: text}
}

// lastErrorWords explains a server's lastError to a person; the code is
// shown next to it.
var lastErrorWords = map[string]string{
	reviews.ToolChanged:                "a tool's definition changed after it was approved; the tool is blocked until you approve its new definition or remove it",
	ports.ErrServerUnreachable.Error(): "the server could not be reached",
	ports.ErrTimeout.Error():           "the server did not answer in time",
	ports.ErrResponseTooLarge.Error():  "the server's answer was larger than allowed",
	ports.ErrProtocol.Error():          "the server did not speak MCP as expected",
	ports.ErrRedirectRefused.Error():   "the server answered with a redirect, which is never followed",
	ports.ErrAddressBlocked.Error():    "the host resolved to an address this instance may not contact",
	"server_unauthorized":              "the server refused the credential (401 or 403); it may be wrong or expired",
}

// limitsByName are the numbers forms show and enforce in the browser (the
// use cases enforce them again).
var limitsByName = map[string]int{
	"description": limits.MaxToolDescriptionLen,
	"tools":       limits.MaxToolsPerServer,
	"servers":     limits.MaxPolicyServers,
	"minCalls":    limits.MinCallsPerRun,
	"maxCalls":    limits.MaxCallsPerRun,
	"perMinute":   limits.MaxCallsPerMinute,
}

var funcs = template.FuncMap{
	"visible": visible,
	"when":    when,
	// connectedNow: a code-flow connection without a refresh token ends
	// with its access token (display only; the connector enforces it).
	"connectedNow": func(v server.OAuthView) bool { return v.Connected(time.Now()) },
	"short":        func(s string) string { return shorten(s, 12) },
	"lastError": func(code string) string {
		if w, ok := lastErrorWords[code]; ok {
			return w
		}
		return "the last discovery failed"
	},
	"host": hostOf,
	"findingWords": func(code string) string {
		if w, ok := findingWords[code]; ok {
			return w
		}
		return code
	},
	"statusWords": func(st server.Status) string { return statusWords[st] },
	"skipWords":   func(r review.ServerReason) string { return serverReasonWords[r] },
	"statusClass": statusClass,
	"pathEscape":  url.PathEscape,
	"fe":          func(f *formError, name string) *fieldError { return f.Said(name) },
	// errText is a free-standing field error (a tool row's description).
	"errText": func(id, text string) *fieldError {
		if text == "" {
			return nil
		}
		return &fieldError{ID: id, Text: text}
	},
	"join":      strings.Join,
	"limit":     func(name string) int { return limitsByName[name] },
	"runes":     func(s string) int { return len([]rune(s)) },
	"add":       func(a, b int) int { return a + b },
	"writeHint": writeHint,
	"pretty":    prettyJSON,
	"dict":      dict,
	"list":      func(v ...string) []string { return v },
	"details": func(d map[string]any) string {
		b, err := json.Marshal(d)
		if err != nil {
			return ""
		}
		return string(b)
	},
}

// statusClass is the badge style of a status; the badge always carries
// the status in words too, never colour alone.
func statusClass(st server.Status) string {
	switch st {
	case server.StatusOK:
		return "ok"
	case server.StatusToolsChanged, server.StatusUnauthorized, server.StatusUnreachable, server.StatusOutsideAllowlist:
		return "bad"
	case server.StatusNeedsConnection:
		return "warn"
	}
	return ""
}

func when(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// dict builds a map from key, value pairs, to pass several values to a
// component.
func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("dict: odd number of arguments")
	}
	m := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
		}
		m[k] = kv[i+1]
	}
	return m, nil
}

// logFor is the UI's logger with the id httpapi's request log gave r
// (zerolog's hlog), so a failure logged here joins its access line.
func (u *UI) logFor(r *http.Request) *zerolog.Logger {
	l := u.log
	if id, ok := hlog.IDFromRequest(r); ok {
		l = l.With().Str("request_id", id.String()).Logger()
	}
	return &l
}
