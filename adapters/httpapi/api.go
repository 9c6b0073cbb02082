package httpapi

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/ports"
	"github.com/go-playground/validator/v10"
	"github.com/rs/zerolog/hlog"
)

// Authenticator resolves a bearer token to its principal; ports.ErrNotFound
// (or any error) means unauthenticated.
type Authenticator interface {
	Handle(ctx context.Context, q accounts.Authenticate) (ports.Principal, error)
}

// handlerFunc is an API handler: it gets the caller and returns the status
// and body to write, or an error that becomes the contract's error shape.
type handlerFunc func(r *http.Request, p ports.Principal) (int, any, error)

// router registers API routes behind authentication and a permission.
type router struct {
	mux      *http.ServeMux
	auth     Authenticator
	validate *validator.Validate
	gates    app.Gates
	// proxies decide which address is the client's (clientAddr).
	proxies netpolicy.TrustedProxies
}

// gated registers an MCP change: after authentication and the
// permission, the gates (not_signed_off, instance_disabled) answer before
// the body is read, so a closed instance answers the same whatever the
// body holds. The use case checks the gates again.
func (rt *router) gated(pattern, perm string, h handlerFunc) {
	rt.handle(pattern, perm, func(r *http.Request, p ports.Principal) (int, any, error) {
		if err := rt.gates.Check(); err != nil {
			return 0, nil, err
		}
		return h(r, p)
	})
}

// handle registers pattern; perm "" means any valid token.
func (rt *router) handle(pattern, perm string, h handlerFunc) {
	var perms []string
	if perm != "" {
		perms = []string{perm}
	}
	rt.handleAny(pattern, perms, h)
}

// handleAny registers pattern for tokens that hold any of perms (none
// listed: any valid token).
func (rt *router) handleAny(pattern string, perms []string, h handlerFunc) {
	rt.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		p, err := rt.authenticate(r)
		if err != nil {
			rt.fail(w, r, err)
			return
		}
		setLogTenant(r.Context(), p.TenantID)
		if len(perms) > 0 && !slices.ContainsFunc(perms, func(perm string) bool { return hasPermission(p, perm) }) {
			rt.fail(w, r, app.Fail(app.CodeForbidden, "the token lacks the permission "+strings.Join(perms, " or ")))
			return
		}
		if err := checkQuery(r); err != nil {
			rt.fail(w, r, err)
			return
		}
		status, body, err := h(r, p)
		if err != nil {
			rt.fail(w, r, err)
			return
		}
		if body == nil {
			w.WriteHeader(status)
			return
		}
		writeJSON(w, status, body)
	})
}

func (rt *router) authenticate(r *http.Request) (ports.Principal, error) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return ports.Principal{}, app.Fail(app.CodeUnauthenticated, "a bearer token is required")
	}
	client := rt.clientAddr(r)
	p, err := rt.auth.Handle(r.Context(), accounts.Authenticate{Token: strings.TrimSpace(token), Client: client})
	if err != nil {
		e := app.AsError(err)
		if errors.Is(err, ports.ErrNotFound) {
			e = app.Fail(app.CodeUnauthenticated, "unknown token")
		}
		if e.Code == app.CodeUnauthenticated || e.Code == app.CodeRateLimited {
			// Failed bearer authentications are logged with the client's
			// address (never the token).
			hlog.FromRequest(r).Warn().Str("client", client).Str("code", string(e.Code)).Str("route", r.Pattern).Msg("authentication failed")
			return ports.Principal{}, e
		}
		return ports.Principal{}, err
	}
	return p, nil
}

// clientAddr is the address of the request's client: the connection's
// peer, or, when the peer is a trusted proxy, the address its
// X-Forwarded-For names (netpolicy.TrustedProxies.ClientAddr, which the
// web sign-in uses too).
func (rt *router) clientAddr(r *http.Request) string {
	return rt.proxies.ClientAddr(r.RemoteAddr, r.Header.Values("X-Forwarded-For"))
}

func hasPermission(p ports.Principal, perm string) bool { return slices.Contains(p.Permissions, perm) }

// fail writes err in the contract's shape; the cause goes to the log only.
func (rt *router) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := app.AsError(err)
	status := e.Code.Status()
	l := hlog.FromRequest(r)
	ev := l.Debug()
	if status >= 500 {
		ev = l.Error()
	}
	ev.Err(e.Cause).Str("code", string(e.Code)).Str("route", r.Pattern).Msg("request failed")
	if status >= 500 && e.Code == app.CodeInternal {
		writeError(w, status, string(app.CodeInternal), "internal error", nil)
		return
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="codelotse"`)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	var fields map[string]string
	if e.Code == app.CodeValidationFailed {
		fields = e.Fields
	}
	writeError(w, status, string(e.Code), e.Message, fields)
}

// decode reads a JSON body strictly into v: at most max bytes, then the
// strict decoder (strictUnmarshal: encoding/json/v2 semantics, no unknown
// fields, no duplicate or case-only names, no NUL byte, no null object,
// exactly one value); then runs the validator tags on v. Errors are
// bad_json or validation_failed.
func (rt *router) decode(r *http.Request, v any, max int64) error {
	if max <= 0 {
		max = limits.MaxRequestBody
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return app.Fail(app.CodeBadJSON, "the body could not be read")
	}
	if int64(len(body)) > max {
		return app.Fail(app.CodeBadJSON, "the body is too large")
	}
	// Every decoding error but the strict input rules (validation_failed)
	// is bad_json, a wrong type included: the decoder stops at its first
	// error, so a type error could otherwise hide an unknown field (a
	// "command" next to a bad "name").
	if err := strictUnmarshal(body, v); err != nil {
		return err
	}
	return rt.check(v)
}

// check runs validator tags; field names in the result are the JSON names.
func (rt *router) check(v any) error {
	err := rt.validate.Struct(v)
	if err == nil {
		return nil
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) {
		return app.Fail(app.CodeBadJSON, "the body has an unexpected shape")
	}
	fields := map[string]string{}
	for _, fe := range verrs {
		fields[jsonPath(fe.Namespace())] = reason(fe)
	}
	return app.Invalid(fields)
}

// jsonPath turns "createServer.auth.token" into "auth.token".
func jsonPath(ns string) string {
	if _, rest, ok := strings.Cut(ns, "."); ok {
		return rest
	}
	return ns
}

func reason(fe validator.FieldError) string {
	switch fe.Tag() {
	case "required":
		return "is required"
	case "max":
		return "is too long or too large (at most " + fe.Param() + ")"
	case "min":
		return "is too short or too small (at least " + fe.Param() + ")"
	case "oneof":
		return "must be one of " + fe.Param()
	case "uuid":
		return "must be a UUID"
	default:
		return "is invalid (" + fe.Tag() + ")"
	}
}

// newValidator returns a validator whose field names are the JSON names.
func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		if name == "" {
			return f.Name
		}
		return name
	})
	return v
}
