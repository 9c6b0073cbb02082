package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/codelotse/codelotse/ports"
)

// codedError is what leaves the package: one of the ports sentinels, and
// for a caller's own cancellation the context error, so errors.Is works
// for both. Its text is the code alone; the cause stays in the debug log.
type codedError struct {
	code   error
	ctxErr error // context.Canceled or DeadlineExceeded of the caller, or nil
}

func (e *codedError) Error() string { return e.code.Error() }

func (e *codedError) Unwrap() []error {
	if e.ctxErr != nil {
		return []error{e.code, e.ctxErr}
	}
	return []error{e.code}
}

// failure is a cause recorded by the guarded transport, tagged with the
// sentinel it maps to. It never leaves the package: only its code does.
type failure struct {
	code  error
	cause error
}

func (f *failure) Error() string {
	if f.cause == nil {
		return f.code.Error()
	}
	return f.code.Error() + ": " + f.cause.Error()
}

func (f *failure) Unwrap() error { return f.code }

func fail(code, cause error) *failure { return &failure{code: code, cause: cause} }

// recorder keeps the first failure the guarded transport saw. The go-sdk
// turns transport errors into its own errors (or a synthetic "request
// terminated without response"), so the reason is kept on the side: one
// recorder per MCP operation, carried in the request context, and one per
// session for failures that break the whole connection.
//
// The operation's recorder also carries what the transport bounds per
// operation rather than per request: the bytes read across all its
// responses (a resumed stream counts against the same cap) and the
// number of stream resumptions.
type recorder struct {
	mu    sync.Mutex
	first *failure
	// handshake marks the operation that opens the session. In it a
	// failure ends the operation: no request follows one, so a server
	// that timed out or dropped the connection on server/discover is not
	// asked again with initialize (see handshakeOnce in layers.go).
	handshake atomic.Bool
	read      atomic.Int64 // response bytes of the operation
	resumed   atomic.Int64 // resumption requests (GET with Last-Event-ID)
	// refreshed: the operation already fetched a new access token after
	// a 401 (at most one per operation).
	refreshed atomic.Bool
}

func (r *recorder) record(f *failure) {
	if r == nil || f == nil {
		return
	}
	r.mu.Lock()
	if r.first == nil {
		r.first = f
	}
	r.mu.Unlock()
}

func (r *recorder) get() *failure {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first
}

type recorderKey struct{}

// withRecorder returns a context whose HTTP requests record their failures
// in a new recorder.
func withRecorder(ctx context.Context) (context.Context, *recorder) {
	r := &recorder{}
	return context.WithValue(ctx, recorderKey{}, r), r
}

func recorderFrom(ctx context.Context) *recorder {
	r, _ := ctx.Value(recorderKey{}).(*recorder)
	return r
}

// classify maps the error of an MCP operation to a sentinel. Order: what
// the transport saw for this operation; the caller's context; an error
// answer of the server; what broke the session earlier; otherwise a
// protocol error (the server said something the SDK could not use).
//
// caller is the caller's context (its error joins the chain), opCtx the
// operation's own, bounded by the timeout.
func classify(caller, opCtx context.Context, err error, op, session *recorder) (*codedError, *failure) {
	ce := caller.Err()
	if f := op.get(); f != nil {
		return &codedError{code: f.code, ctxErr: ce}, f
	}
	if ce != nil {
		return &codedError{code: ports.ErrTimeout, ctxErr: ce}, fail(ports.ErrTimeout, err)
	}
	if opCtx.Err() != nil {
		return &codedError{code: ports.ErrTimeout}, fail(ports.ErrTimeout, err)
	}
	// A server's error message and what the SDK could not decode are
	// the server's text: it may echo the arguments or carry output, which
	// are never logged (MC12). The debug log gets the JSON-RPC code or
	// the error's type.
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return &codedError{code: ports.ErrProtocol}, fail(ports.ErrProtocol, fmt.Errorf("JSON-RPC error %d", rpcErr.Code))
	}
	if f := session.get(); f != nil {
		return &codedError{code: f.code}, f
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return &codedError{code: ports.ErrServerUnreachable}, fail(ports.ErrServerUnreachable, err)
	}
	return &codedError{code: ports.ErrProtocol}, fail(ports.ErrProtocol, fmt.Errorf("unusable answer (%T)", err))
}
