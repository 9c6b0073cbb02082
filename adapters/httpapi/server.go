// Package httpapi is the driving HTTP adapter: the admin REST API of
// openapi.yaml, health endpoints, request logging and recovery.
package httpapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/ports"
	"github.com/rs/zerolog"
)

// Addr is the listen address (QUAVON_HTTP_ADDR).
type Addr string

// ShutdownTimeout bounds graceful shutdown after SIGTERM.
const ShutdownTimeout = 10 * time.Second

// Server is the HTTP server of `codelotse serve` and `codelotse api`.
type Server struct {
	addr    Addr
	log     zerolog.Logger
	handler http.Handler
	// listening are told the bound address (route groups that need it).
	listening []func(net.Addr)
}

// listener is a route group that wants the address the server bound,
// which differs from Addr when its port is 0.
type listener interface {
	listening(addr net.Addr)
}

// Routes is a group of API routes (one per slice of the contract).
type Routes interface {
	register(rt *router)
}

// NewServer builds the server: health endpoints, and every group of API
// routes behind bearer authentication; proxies are the reverse proxies
// whose X-Forwarded-For names a client (QUAVON_TRUSTED_PROXIES).
// m, when not nil, records every request's duration.
func NewServer(addr Addr, log zerolog.Logger, ready ports.Readiness, auth Authenticator, gates app.Gates, proxies netpolicy.TrustedProxies, routes []Routes, m HTTPMetrics) *Server {
	mux := http.NewServeMux()
	rt := &router{mux: mux, auth: auth, validate: newValidator(), gates: gates, proxies: proxies}
	var listening []func(net.Addr)
	for _, r := range routes {
		r.register(rt)
		if l, ok := r.(listener); ok {
			listening = append(listening, l.listening)
		}
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, string(app.CodeNotFound), "no such endpoint", nil)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := ready.Ping(ctx); err != nil {
			log.Warn().Err(err).Msg("readiness check failed")
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	return &Server{addr: addr, log: log, handler: withRequestLog(log, m, withRecovery(mux)), listening: listening}
}

// Handler is the server's root handler, for tests.
func (s *Server) Handler() http.Handler { return s.handler }

// Run listens and serves until ctx is done, then shuts down gracefully
// within ShutdownTimeout. ready, when not nil, receives the bound address.
func (s *Server) Run(ctx context.Context, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", string(s.addr))
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		// A review request may carry 8 MiB; an allowlist save discovers
		// live inside the request (several MCP round trips of up to 10 s).
		ReadTimeout:  time.Minute,
		WriteTimeout: 3 * time.Minute,
		IdleTimeout:  2 * time.Minute,
		BaseContext:  func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	for _, f := range s.listening {
		f(ln.Addr())
	}
	s.log.Info().Str("addr", ln.Addr().String()).Msg("listening")
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
	}
	if serveErr := <-errc; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	s.log.Info().Msg("stopped")
	return err
}
