package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/codelotse/codelotse/ports"
)

// unavailable marks err with [ports.ErrUnavailable] when it says that the
// database cannot be reached or is going away (lostConnection), unless
// ctx ended: a request's own deadline or cancellation is not an outage.
func unavailable(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || errors.Is(err, ports.ErrUnavailable) || !lostConnection(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ports.ErrUnavailable, err)
}

// lostConnection reports an error of the connection rather than of the
// query: no connection could be made, the server closed it or is
// shutting down or starting (SQLSTATE class 08, 57P01–57P03), or the
// socket failed.
func lostConnection(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	var ce *pgconn.ConnectError
	var ne *net.OpError
	return errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
