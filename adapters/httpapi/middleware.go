package httpapi

import (
	"cmp"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/rs/xid"
	"github.com/rs/zerolog"
	"github.com/rs/zerolog/hlog"
	"go.opentelemetry.io/otel/trace"
)

// statusRecorder remembers the status a handler wrote, so withRecovery
// knows whether the answer has started.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// requestInfo is filled in by inner handlers (the tenant once a token is
// known) and read by the request log.
type requestInfo struct {
	tenantID string
}

type requestInfoKey struct{}

// withRequestLog gives each request a random id (the X-Request-Id header
// and the request_id field of every line logged through
// [hlog.FromRequest]) and writes one JSON access line per request with
// zerolog's hlog: method, route pattern, status, duration, tenant id and
// request id. Never a body, a query string or a header value: those may
// carry credentials. It also opens and ends the request's span and
// records its duration (observe.go).
func withRequestLog(log zerolog.Logger, m HTTPMetrics, next http.Handler) http.Handler {
	access := hlog.AccessHandler(func(r *http.Request, status, _ int, d time.Duration) {
		status = cmp.Or(status, http.StatusOK)
		endSpan(trace.SpanFromContext(r.Context()), m, r.Method, r.Pattern, status, d)
		l := hlog.FromRequest(r)
		ev := l.Info()
		if status >= 500 {
			ev = l.Error()
		}
		ev.Str("method", r.Method).Str("route", cmp.Or(r.Pattern, "unmatched")).Int("status", status).
			Dur("duration", d).Str("tenant_id", logTenant(r.Context())).Msg("request")
	})(next)
	// The span and the tenant slot go into the context before
	// AccessHandler, so the request it passes on, which the mux gives its
	// pattern, is the one its callback reads.
	withSpan := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, _ := startSpan(r)
		access.ServeHTTP(w, r.WithContext(contextWithInfo(ctx, &requestInfo{})))
	})
	// hlog's own ids are xids, which carry a counter, the process id and a
	// machine hash; the id handed out here is 12 random bytes in the same
	// type, so the header tells a client nothing about the server.
	randomID := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var id xid.ID
			_, _ = rand.Read(id[:])
			next.ServeHTTP(w, r.WithContext(hlog.CtxWithID(r.Context(), id)))
		})
	}
	return hlog.NewHandler(log)(randomID(hlog.RequestIDHandler("request_id", "X-Request-Id")(withSpan)))
}

// withRecovery turns a panic in a handler into a logged 500; the process
// keeps serving. The log gets the panic value's type and the stack, not the
// value, which may hold request data; the 500 is written only when the
// handler had not started its answer.
func withRecovery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				hlog.FromRequest(r).Error().Str("panic_type", fmt.Sprintf("%T", v)).Bytes("stack", debug.Stack()).
					Str("route", r.Pattern).Msg("handler panicked")
				if rec.status == 0 {
					writeError(rec, http.StatusInternalServerError, "internal", "internal error", nil)
				}
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// writeError writes the API's error shape (openapi.yaml, Error). Callers pass fixed codes and
// messages; causes go to the log, never into the body.
func writeError(w http.ResponseWriter, status int, code, message string, fields map[string]string) {
	writeJSON(w, status, errorBody{Error: errorDetail{Code: code, Message: message, Fields: fields}})
}
