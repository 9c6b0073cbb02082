package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

// The tenant and system transactions begin in one round trip: BEGIN and
// the statements that scope the transaction (SET LOCAL ROLE, set_config)
// go to the server as one simple-protocol query. database/sql has no
// option for that, so the connections of [DB.Bun] are pgx's stdlib
// connections with BeginTx replaced: a transaction whose context carries
// a begin query (withBeginQuery) starts with that query instead of a bare
// BEGIN. While a read scope is open on a connection (readscope.go), its
// queries and statements go out in one pipeline behind the scope's
// statement. Every other method is stdlib's.
//
// The same connections run bun's queries without pgx's statement cache.
// bun writes every value into the query text, so a query's text names its
// tenant and ids; with the cache (pgx's default mode) nearly every query
// would be a new statement to prepare, an extra round trip, and a cache
// entry and a server-side prepared statement evicted soon after. A query
// without arguments therefore runs in pgx's exec mode: parse, bind,
// describe and execute as one round trip on the unnamed statement.
// Queries with arguments (River's job insert) keep pgx's default.
//
// When the query fails after its BEGIN (a role that cannot be switched
// to), the connection is left inside an aborted transaction; pgxpool
// destroys a connection released in that state, so it never serves
// another request.

type beginQueryKey struct{}

// withBeginQuery makes the next transaction begun with ctx start with q,
// which must begin with BEGIN and take no arguments.
func withBeginQuery(ctx context.Context, q string) context.Context {
	return context.WithValue(ctx, beginQueryKey{}, q)
}

// openSQL is stdlib.OpenDBFromPool with the begin hook.
func openSQL(pool *pgxpool.Pool) *sql.DB {
	db := sql.OpenDB(beginConnector{stdlib.GetPoolConnector(pool)})
	// As stdlib.OpenDBFromPool: pgxpool keeps the idle connections.
	db.SetMaxIdleConns(0)
	return db
}

type beginConnector struct{ driver.Connector }

func (c beginConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		_ = conn.Close()
		return nil, fmt.Errorf("postgres: unexpected driver connection %T", conn)
	}
	return &beginConn{Conn: sc}, nil
}

// beginConn is a stdlib connection whose BeginTx honours withBeginQuery
// and whose queries run in a read scope while one is open on it
// (setReadScope, readscope.go): scope is the scope's statement, scopeCtx
// the context that cancels its queries. database/sql hands a connection
// to one user at a time.
type beginConn struct {
	*stdlib.Conn
	scope    string
	scopeCtx context.Context // the read scope's, see setReadScope
}

func (c *beginConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	q, ok := ctx.Value(beginQueryKey{}).(string)
	if !ok || opts.Isolation != driver.IsolationLevel(sql.LevelDefault) || opts.ReadOnly {
		return c.Conn.BeginTx(ctx, opts)
	}
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn // as stdlib: database/sql retries on another connection
	}
	tx, err := c.Conn.Conn().BeginTx(ctx, pgx.TxOptions{BeginQuery: q})
	if err != nil {
		return nil, err
	}
	return pgxTx{ctx: ctx, tx: tx}, nil
}

// QueryContext runs a query without arguments in pgx's exec mode (see
// above); stdlib passes the mode on to pgx as a query option.
func (c *beginConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.scope != "" {
		return c.scopedQuery(ctx, query, args)
	}
	if len(args) == 0 {
		args = []driver.NamedValue{{Ordinal: 1, Value: pgx.QueryExecModeExec}}
	}
	return c.Conn.QueryContext(ctx, query, args)
}

// ExecContext runs a statement in the open read scope, if any (which
// makes it fail if it writes: the scope is read-only), as stdlib otherwise.
func (c *beginConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if c.scope == "" {
		return c.Conn.ExecContext(ctx, query, args)
	}
	rows, err := c.scopedQuery(ctx, query, args)
	if err != nil {
		return nil, err
	}
	r := rows.(*scopedRows)
	for r.rows.Next() {
	}
	if err := r.Close(); err != nil {
		return nil, err
	}
	return driver.RowsAffected(r.rows.CommandTag().RowsAffected()), nil
}

// pgxTx is a pgx transaction as a driver.Tx (stdlib's own is unexported).
type pgxTx struct {
	ctx context.Context
	tx  pgx.Tx
}

func (t pgxTx) Commit() error   { return t.tx.Commit(t.ctx) }
func (t pgxTx) Rollback() error { return t.tx.Rollback(t.ctx) }
