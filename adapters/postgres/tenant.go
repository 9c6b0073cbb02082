package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
)

// TenantRole is the role tenant-scoped queries run as. The migrations create
// it (NOLOGIN, NOSUPERUSER, NOBYPASSRLS) and grant it to the migrating role.
const TenantRole = "codelotse_tenant"

var (
	// ErrInvalidTenantID is returned by [DB.WithTenant] for a tenant id
	// that is not a UUID.
	ErrInvalidTenantID = errors.New("postgres: tenant id is not a UUID")
	// ErrUnsafeTenantRole is wrapped by [DB.CheckTenantRole] when row-level
	// security would not hold for [TenantRole].
	ErrUnsafeTenantRole = errors.New("postgres: unsafe tenant role")
)

// WithTenant runs fn in a transaction scoped to one tenant: the transaction
// switches to [TenantRole] with SET LOCAL ROLE and sets app.tenant_id, which
// the row-level security policies of every table compare with. Both end
// with the transaction, so nothing leaks to the next user of the pooled
// connection. The transaction commits when fn returns nil and rolls back
// when it returns an error or panics (the panic continues).
//
// SET ROLE guards against mistakes in our own queries (a forgotten WHERE, a
// foreign id), not against arbitrary SQL: a statement could RESET ROLE. fn
// must therefore pass values only as query arguments.
func (db *DB) WithTenant(ctx context.Context, tenantID string, fn func(ctx context.Context, tx bun.Tx) error) error {
	if !isUUID(tenantID) {
		return ErrInvalidTenantID
	}
	// One round trip begins the transaction, switches the role and names
	// the tenant (begin.go); the id is a validated UUID, so it can be
	// written into the query.
	begin := "BEGIN; SET LOCAL ROLE " + TenantRole + "; SELECT set_config('app.tenant_id', '" + tenantID + "', true)"
	return db.runScoped(ctx, begin, "tenant", fn)
}

// ReadTenant runs fn, which only reads, scoped to one tenant as
// [DB.WithTenant] does, at one round trip per query instead of three for
// the whole transaction (begin, query, commit): there is no BEGIN and no
// COMMIT, each query goes to the server together with the statement
// that switches to [TenantRole], names the tenant and makes the
// transaction read-only (readscope.go), and PostgreSQL runs the two as
// one implicit transaction. A write in fn fails (read-only transaction);
// queries must not take arguments (bun writes values into the text). The
// queries of fn do not share a snapshot, as in a READ COMMITTED
// transaction.
//
// fn runs on one pooled connection, not in a database/sql transaction:
// database/sql starts a goroutine for every transaction, and for every
// query whose context can be canceled, and those goroutines (their
// start, and waking the scheduler's other thread for them) cost about as
// much as a round trip. So fn's context carries ctx's values but not its
// cancellation; the scope's queries are still canceled with ctx, which
// pgx watches itself.
func (db *DB) ReadTenant(ctx context.Context, tenantID string, fn func(ctx context.Context, conn bun.IDB) error) error {
	if !isUUID(tenantID) {
		return ErrInvalidTenantID
	}
	scope := "SELECT set_config('role', '" + TenantRole + "', true), set_config('app.tenant_id', '" + tenantID +
		"', true), set_config('transaction_read_only', 'on', true)"
	conn, err := db.bun.Conn(ctx)
	if err != nil {
		return unavailable(ctx, fmt.Errorf("postgres: enter read scope: %w", err))
	}
	// Close returns the connection to the pool; database/sql keeps no idle
	// connections of its own (openSQL), so the driver connection, scope
	// and all, is dropped with it.
	defer func() { _ = conn.Close() }()
	if err := setReadScope(ctx, conn.Conn, scope); err != nil {
		return unavailable(ctx, fmt.Errorf("postgres: enter read scope: %w", err))
	}
	defer func() { _ = setReadScope(nil, conn.Conn, "") }()
	return unavailable(ctx, fn(context.WithoutCancel(ctx), conn))
}

// runScoped runs fn in a transaction that begins with the begin query
// (begin.go). RunInTx rolls back when fn returns an error or panics; fn
// gets the caller's context, without the begin query. An error of the
// begin query says which scope failed; a lost connection is
// ports.ErrUnavailable.
func (db *DB) runScoped(ctx context.Context, begin, scope string, fn func(ctx context.Context, tx bun.Tx) error) error {
	began := false
	err := db.bun.RunInTx(withBeginQuery(ctx, begin), nil, func(_ context.Context, tx bun.Tx) error {
		began = true
		return fn(ctx, tx)
	})
	if err != nil && !began {
		err = fmt.Errorf("postgres: enter %s scope: %w", scope, err)
	}
	return unavailable(ctx, err)
}

// WithSystem runs fn in a transaction as the connecting role, for the few
// queries that are not scoped to one tenant: looking up a token by its
// hash, creating a tenant, the retention job, the recheck's list of
// servers and key rotation. Nothing else may use it.
//
// It cannot run as [TenantRole], whose policies show one tenant at a time.
// A superuser bypasses row-level security; any other connecting role owns
// the tables and, because security is forced, sees rows only through the
// system_access policy, which requires the app.system setting made here. A
// query on the connecting role outside WithTenant and WithSystem therefore
// sees no rows (unless the role is a superuser).
func (db *DB) WithSystem(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	return db.runScoped(ctx, "BEGIN; SELECT set_config('app.system', 'on', true)", "system", fn)
}

// CheckTenantRole verifies at startup that row-level security holds for
// [TenantRole]: it exists, is not superuser, lacks BYPASSRLS, is not a
// member of a role that is, owns no table of this database (directly or
// through a role it belongs to), and the connecting role can switch to it.
// Errors wrap [ErrUnsafeTenantRole], except database errors.
func (db *DB) CheckTenantRole(ctx context.Context) error {
	var st struct {
		Super, BypassRLS, PrivilegedMember bool
		OwnedTables                        string
	}
	err := db.bun.NewRaw(`
		SELECT r.rolsuper, r.rolbypassrls,
		       EXISTS (SELECT FROM pg_roles p
		               WHERE (p.rolsuper OR p.rolbypassrls) AND p.oid <> r.oid
		                 AND pg_has_role(r.oid, p.oid, 'MEMBER')) AS privileged_member,
		       (SELECT coalesce(string_agg(c.oid::regclass::text, ', '), '') FROM pg_class c
		        WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
		          AND pg_has_role(r.oid, c.relowner, 'MEMBER')) AS owned_tables
		FROM pg_roles r WHERE r.rolname = ?`, TenantRole).Scan(ctx, &st.Super, &st.BypassRLS, &st.PrivilegedMember, &st.OwnedTables)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("%w: role %s does not exist; run codelotse migrate", ErrUnsafeTenantRole, TenantRole)
	case err != nil:
		return fmt.Errorf("postgres: check tenant role: %w", err)
	case st.Super:
		return fmt.Errorf("%w: role %s is a superuser", ErrUnsafeTenantRole, TenantRole)
	case st.BypassRLS:
		return fmt.Errorf("%w: role %s has BYPASSRLS", ErrUnsafeTenantRole, TenantRole)
	case st.PrivilegedMember:
		return fmt.Errorf("%w: role %s is a member of a superuser or BYPASSRLS role", ErrUnsafeTenantRole, TenantRole)
	case st.OwnedTables != "":
		return fmt.Errorf("%w: role %s owns %s", ErrUnsafeTenantRole, TenantRole, st.OwnedTables)
	}

	tx, err := db.bun.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("postgres: check tenant role: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SET LOCAL ROLE "+TenantRole); err != nil {
		return fmt.Errorf("%w: the connecting role cannot SET ROLE %s: %w", ErrUnsafeTenantRole, TenantRole, err)
	}
	return nil
}
