package httpapi

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/rs/zerolog"
)

// statusRecorder remembers the status a handler wrote.
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

// withRequestLog writes one JSON line per request: method, route pattern,
// status, duration, tenant id and request id. Never a body, a query string
// or a header value: those may carry credentials.
// It also ends the request's span and records its duration (observe.go).
func withRequestLog(log zerolog.Logger, m HTTPMetrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := newRequestID()
		w.Header().Set("X-Request-Id", id)
		info := &requestInfo{}
		rec := &statusRecorder{ResponseWriter: w}
		ctx, span := startSpan(r)
		r = r.WithContext(contextWithInfo(ctx, info))
		next.ServeHTTP(rec, r)
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		endSpan(span, m, r.Method, r.Pattern, rec.status, time.Since(start))
		ev := log.Info()
		if rec.status >= 500 {
			ev = log.Error()
		}
		ev.Str("method", r.Method).Str("route", cmp.Or(r.Pattern, "unmatched")).Int("status", rec.status).
			Dur("duration", time.Since(start)).Str("tenant_id", info.tenantID).
			Str("request_id", id).Msg("request")
	})
}

// withRecovery turns a panic in a handler into a logged 500; the process
// keeps serving. The log gets the panic value's type and the stack, not the
// value, which may hold request data; the 500 is written only when the
// handler had not started its answer.
func withRecovery(log zerolog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec, ok := w.(*statusRecorder)
		if !ok {
			rec = &statusRecorder{ResponseWriter: w}
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.Error().Str("panic_type", fmt.Sprintf("%T", v)).Bytes("stack", debug.Stack()).
					Str("route", r.Pattern).Msg("handler panicked")
				if rec.status == 0 {
					writeError(rec, http.StatusInternalServerError, "internal", "internal error", nil)
				}
			}
		}()
		next.ServeHTTP(rec, r)
	})
}

func newRequestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
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

// writeError writes CONTRACT.md's error shape. Callers pass fixed codes and
// messages; causes go to the log, never into the body.
func writeError(w http.ResponseWriter, status int, code, message string, fields map[string]string) {
	writeJSON(w, status, errorBody{Error: errorDetail{Code: code, Message: message, Fields: fields}})
}
