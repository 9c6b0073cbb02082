package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"math"
	"net/http"
	"slices"
	"strconv"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
)

// CookieName is the session cookie.
const CookieName = "codelotse_session"

// maxFormBytes bounds a form body like the API bounds a JSON body.
const maxFormBytes = 64 << 10

// largeForms are the forms allowed more: the tool selection carries up to
// 200 tools with their descriptions and the discovery (at most 1 MiB from
// the server) in base64.
var largeForms = map[string]int64{
	"POST /ui/servers/{id}/tools": 4 << 20,
}

// caller is the signed-in user of a request.
type caller struct {
	accounts.Session
	csrf string
}

func (c *caller) can(perm string) bool { return slices.Contains(c.Principal.Permissions, perm) }

// csrfToken derives the session's CSRF token from its secret: per
// session, never stored, and useless without the HttpOnly cookie.
func csrfToken(secret string) string {
	sum := sha256.Sum256([]byte("codelotse csrf\x00" + secret))
	return hex.EncodeToString(sum[:])
}

// handler is a page handler of a signed-in caller.
type handler func(w http.ResponseWriter, r *http.Request, c *caller)

// view serves a page to a signed-in caller with perm ("" for any).
func (u *UI) view(perm string, h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := u.resume(w, r)
		if !ok {
			return
		}
		if perm != "" && !c.can(perm) {
			u.forbidden(w, r, c, perm)
			return
		}
		h(w, r, c)
	}
}

// state serves a state-changing request: the Origin must be the public
// URL's, the session valid and the form's CSRF token the session's,
// checked in that order before the handler reads anything.
func (u *UI) state(perm string, h handler) http.HandlerFunc {
	return u.sameOrigin(func(w http.ResponseWriter, r *http.Request) {
		c, ok := u.resume(w, r)
		if !ok {
			return
		}
		limit, ok := largeForms[r.Pattern]
		if !ok {
			limit = maxFormBytes
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if err := r.ParseForm(); err != nil {
			u.render(w, r, http.StatusBadRequest, "message", c, messagePage{Heading: "Bad request", Text: "The form could not be read (is it too large?)."})
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.PostForm.Get("csrf")), []byte(c.csrf)) != 1 {
			u.render(w, r, http.StatusForbidden, "message", c, messagePage{Heading: "Refused",
				Text: "The form is out of date or did not come from this site (CSRF check). Reload the page and try again."})
			return
		}
		if perm != "" && !c.can(perm) {
			u.forbidden(w, r, c, perm)
			return
		}
		if u.refuseInput(w, r, c, r.PostForm, "field") {
			return
		}
		h(w, r, c)
	})
}

// sameOrigin refuses a request whose Origin header is not the public
// URL's origin; browsers send Origin with every POST.
func (u *UI) sameOrigin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		origin := *u.origin.Load()
		if r.Header.Get("Origin") != origin {
			u.render(w, r, http.StatusForbidden, "message", nil, messagePage{Heading: "Refused",
				Text: "This request did not come from " + origin + " (Origin check)."})
			return
		}
		h(w, r)
	}
}

// resume finds the caller's session; without one, a page request goes to
// the sign-in page.
func (u *UI) resume(w http.ResponseWriter, r *http.Request) (*caller, bool) {
	cookie, err := r.Cookie(CookieName)
	if err != nil {
		u.toLogin(w, r, "")
		return nil, false
	}
	s, err := u.d.ResumeSession.Handle(r.Context(), accounts.ResumeSession{Secret: cookie.Value})
	if err != nil {
		if app.AsError(err).Code != app.CodeUnauthenticated {
			u.internal(w, r, nil, err)
			return nil, false
		}
		u.clearCookie(w)
		u.toLogin(w, r, "ended")
		return nil, false
	}
	return &caller{Session: s, csrf: csrfToken(s.Secret)}, true
}

func (u *UI) toLogin(w http.ResponseWriter, r *http.Request, reason string) {
	target := "/ui/login"
	if reason != "" {
		target += "?session=" + reason
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

func (u *UI) setCookie(w http.ResponseWriter, secret string) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: secret, Path: "/ui/", HttpOnly: true, Secure: u.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(accounts.SessionMaxAge.Seconds()),
	})
}

func (u *UI) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: "", Path: "/ui/", HttpOnly: true, Secure: u.secure,
		SameSite: http.SameSiteStrictMode, MaxAge: -1,
	})
}

type loginPage struct {
	Ended bool
	Error *formError
}

func (u *UI) loginPage(w http.ResponseWriter, r *http.Request) {
	u.render(w, r, http.StatusOK, "login", nil, loginPage{Ended: r.URL.Query().Get("session") == "ended"})
}

// login opens a session for an API token. The token is never echoed back.
func (u *UI) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		u.render(w, r, http.StatusBadRequest, "login", nil, loginPage{Error: &formError{Code: "bad_request", Message: "the form could not be read"}})
		return
	}
	client := u.d.Proxies.ClientAddr(r.RemoteAddr, r.Header.Values("X-Forwarded-For"))
	s, err := u.d.SignIn.Handle(r.Context(), accounts.SignIn{Token: r.PostForm.Get("token"), Client: client})
	if err != nil {
		e := app.AsError(err)
		switch e.Code {
		case app.CodeUnauthenticated, app.CodeRateLimited:
		default:
			u.internal(w, r, nil, err)
			return
		}
		// Failed sign-ins are logged with the client's address (never
		// the token); past the limit the answer is 429 with Retry-After.
		u.logFor(r).Warn().Str("client", client).Str("code", string(e.Code)).Msg("web: sign-in failed")
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
		}
		u.render(w, r, e.Code.Status(), "login", nil, loginPage{Error: newFormError(err, "token")})
		return
	}
	// A session the browser still held ends: one browser, one session.
	if old, err := r.Cookie(CookieName); err == nil {
		if err := u.d.SignOut.Handle(r.Context(), accounts.SignOut{Secret: old.Value}); err != nil {
			u.logFor(r).Warn().Err(err).Msg("web: could not end the previous session")
		}
	}
	u.setCookie(w, s.Secret)
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

func (u *UI) logout(w http.ResponseWriter, r *http.Request, c *caller) {
	if err := u.d.SignOut.Handle(r.Context(), accounts.SignOut{Secret: c.Secret}); err != nil {
		u.internal(w, r, c, err)
		return
	}
	u.clearCookie(w)
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
}

// home sends a caller to the first page their permissions show.
func (u *UI) home(w http.ResponseWriter, r *http.Request, c *caller) {
	if c.can(app.PermTenantManage) {
		http.Redirect(w, r, "/ui/servers", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/ui/repositories", http.StatusSeeOther)
}

func (u *UI) forbidden(w http.ResponseWriter, r *http.Request, c *caller, perm string) {
	u.render(w, r, http.StatusForbidden, "message", c, messagePage{Heading: "Not allowed",
		Text: "This page needs the permission " + perm + ", which the token you signed in with does not have."})
}
