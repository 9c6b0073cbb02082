package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// A read scope ([DB.ReadTenant]) is a connection of database/sql that
// sends no BEGIN and no COMMIT. Each of its queries goes to the server in
// one pipeline with the scope's statement in front of it and one Sync
// after both, which PostgreSQL runs as one implicit transaction: the
// scope statement switches the role, names the tenant and makes the
// transaction read-only, all transaction-local, the query runs under
// them, and the Sync ends the transaction and with it every setting. A
// query is therefore one round trip, and nothing of the scope outlives
// it: not after a query that fails (the implicit transaction rolls back),
// nor after one whose rows are not read to the end (closing the rows
// reads on to the Sync).
//
// Each query takes its own snapshot, as every statement of a READ
// COMMITTED transaction does; only writes would notice the difference,
// and the scope is read-only.

// setReadScope opens (scope not empty) or closes the read scope on conn;
// its queries are canceled with ctx.
func setReadScope(ctx context.Context, conn *sql.Conn, scope string) error {
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*beginConn)
		if !ok {
			return fmt.Errorf("postgres: unexpected driver connection %T", dc)
		}
		c.scope, c.scopeCtx = scope, ctx
		return nil
	})
}

var errScopeArgs = errors.New("postgres: a read scope runs queries without arguments only")

// scopedQuery sends the scope statement and query as one pipeline.
func (c *beginConn) scopedQuery(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if len(args) > 0 {
		return nil, errScopeArgs
	}
	conn := c.Conn.Conn()
	if conn.IsClosed() {
		return nil, driver.ErrBadConn
	}
	if ctx.Done() == nil && c.scopeCtx != nil {
		ctx = c.scopeCtx // ReadTenant's context, with its cancellation
	}
	pl := conn.PgConn().StartPipeline(ctx)
	pl.SendQueryParams(c.scope, nil, nil, nil, nil)
	pl.SendQueryParams(query, nil, nil, nil, nil) // text results, as pgx's exec mode
	if err := pl.Sync(); err != nil {
		_ = pl.Close()
		return nil, err
	}
	fail := func(err error) (driver.Rows, error) {
		if cerr := pl.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = errors.New("postgres: read scope: no result")
		}
		return nil, err
	}
	res, err := pl.GetResults()
	if err != nil {
		return fail(fmt.Errorf("postgres: enter read scope: %w", err))
	}
	scope, ok := res.(*pgconn.ResultReader)
	if !ok {
		return fail(fmt.Errorf("postgres: read scope: unexpected result %T", res))
	}
	if _, err := scope.Close(); err != nil {
		return fail(fmt.Errorf("postgres: enter read scope: %w", err))
	}
	res, err = pl.GetResults()
	if err != nil {
		return fail(err)
	}
	rr, ok := res.(*pgconn.ResultReader)
	if !ok {
		return fail(fmt.Errorf("postgres: read scope: unexpected result %T", res))
	}
	r := &scopedRows{pl: pl, rows: pgx.RowsFromResultReader(conn.TypeMap(), rr), m: conn.TypeMap()}
	// As stdlib: read the first row now, so that a failing query fails here.
	r.preloaded, r.more = true, r.rows.Next()
	if err := r.rows.Err(); err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}

// scopedRows are a read scope's rows for database/sql, converted to
// driver values as pgx's stdlib converts them.
type scopedRows struct {
	pl        *pgconn.Pipeline
	rows      pgx.Rows
	m         *pgtype.Map
	values    []func([]byte) (driver.Value, error)
	columns   []string
	preloaded bool
	more      bool
	closed    bool
}

func (r *scopedRows) Columns() []string {
	if r.columns == nil {
		fds := r.rows.FieldDescriptions()
		r.columns = make([]string, len(fds))
		for i, fd := range fds {
			r.columns[i] = fd.Name
		}
	}
	return r.columns
}

// Close reads the rest of the rows and the pipeline's end (the Sync), so
// the connection is idle, outside any transaction, when it returns.
func (r *scopedRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	r.rows.Close()
	err := r.rows.Err()
	if cerr := r.pl.Close(); err == nil {
		err = cerr
	}
	return err
}

func (r *scopedRows) Next(dest []driver.Value) error {
	more := r.more
	if r.preloaded {
		r.preloaded = false
	} else {
		more = r.rows.Next()
	}
	if !more {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	if r.values == nil {
		fds := r.rows.FieldDescriptions()
		r.values = make([]func([]byte) (driver.Value, error), len(fds))
		for i, fd := range fds {
			r.values[i] = valueFunc(r.m, fd)
		}
	}
	for i, raw := range r.rows.RawValues() {
		if raw == nil {
			dest[i] = nil
			continue
		}
		v, err := r.values[i](raw)
		if err != nil {
			return fmt.Errorf("convert field %d failed: %w", i, err)
		}
		dest[i] = v
	}
	return nil
}

// valueFunc converts a column's raw values to the driver values pgx's
// stdlib gives database/sql for its type.
func valueFunc(m *pgtype.Map, fd pgconn.FieldDescription) func([]byte) (driver.Value, error) {
	switch fd.DataTypeOID {
	case pgtype.BoolOID:
		return scanAs(m, fd, func(d bool) (driver.Value, error) { return d, nil })
	case pgtype.ByteaOID, pgtype.JSONOID, pgtype.JSONBOID, pgtype.XMLOID:
		return scanAs(m, fd, func(d []byte) (driver.Value, error) { return d, nil })
	case pgtype.CIDOID, pgtype.OIDOID, pgtype.XIDOID:
		return scanAs(m, fd, func(d pgtype.Uint32) (driver.Value, error) { return d.Value() })
	case pgtype.DateOID:
		return scanAs(m, fd, func(d pgtype.Date) (driver.Value, error) { return d.Value() })
	case pgtype.Float4OID:
		return scanAs(m, fd, func(d float32) (driver.Value, error) { return float64(d), nil })
	case pgtype.Float8OID:
		return scanAs(m, fd, func(d float64) (driver.Value, error) { return d, nil })
	case pgtype.Int2OID:
		return scanAs(m, fd, func(d int16) (driver.Value, error) { return int64(d), nil })
	case pgtype.Int4OID:
		return scanAs(m, fd, func(d int32) (driver.Value, error) { return int64(d), nil })
	case pgtype.Int8OID:
		return scanAs(m, fd, func(d int64) (driver.Value, error) { return d, nil })
	case pgtype.TimestampOID:
		return scanAs(m, fd, func(d pgtype.Timestamp) (driver.Value, error) { return d.Value() })
	case pgtype.TimestamptzOID:
		return scanAs(m, fd, func(d pgtype.Timestamptz) (driver.Value, error) { return d.Value() })
	default:
		return scanAs(m, fd, func(d string) (driver.Value, error) { return d, nil })
	}
}

func scanAs[T any](m *pgtype.Map, fd pgconn.FieldDescription, conv func(T) (driver.Value, error)) func([]byte) (driver.Value, error) {
	var d T
	plan := m.PlanScan(fd.DataTypeOID, fd.Format, &d)
	return func(src []byte) (driver.Value, error) {
		if err := plan.Scan(src, &d); err != nil {
			return nil, err
		}
		return conv(d)
	}
}
