package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
)

// serverNameKey is the unique constraint on (tenant_id, name) of
// mcp_servers, PostgreSQL's default name for it.
const serverNameKey = "mcp_servers_tenant_id_name_key"

// serverRow is a row of mcp_servers without the encrypted credential,
// which is read only by [serverRepo.Credential] and the rotator.
type serverRow struct {
	bun.BaseModel `bun:"table:mcp_servers,alias:s"`

	ID              string          `bun:"id,pk,type:uuid"`
	TenantID        string          `bun:"tenant_id,type:uuid"`
	Name            string          `bun:"name"`
	URL             string          `bun:"url"`
	Enabled         bool            `bun:"enabled"`
	AuthType        string          `bun:"auth_type"`
	CredentialHint  string          `bun:"credential_hint,nullzero"`
	AuthPublic      *authPublicJSON `bun:"auth_public,type:jsonb"`
	AcknowledgedAt  time.Time       `bun:"acknowledged_at,nullzero"`
	Tools           json.RawMessage `bun:"tools,type:jsonb"`
	LastDiscoveryAt time.Time       `bun:"last_discovery_at,nullzero"`
	LastError       string          `bun:"last_error,nullzero"`
	ListedTools     json.RawMessage `bun:"listed_tools,type:jsonb,nullzero"`
	// MaxCallsPerMinute is the calls-per-minute limit, NULL (0) for none.
	MaxCallsPerMinute int       `bun:"max_calls_per_minute,nullzero"`
	CreatedAt         time.Time `bun:"created_at"`
	UpdatedAt         time.Time `bun:"updated_at"`
}

// toolJSON is one element of the tools jsonb array. Its keys happen to be
// spelt like the API's ToolSnapshot, but it is the stored format, owned by
// this adapter and the migrations: approvedAt is a full-precision
// timestamp (the API's is RFC 3339 or null) and annotations are kept as
// the server sent them (the API writes {} for none). A change of the API
// must not rewrite rows, so the two are not one type.
type toolJSON struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	Annotations  json.RawMessage `json:"annotations"`
	WriteCapable bool            `json:"writeCapable"`
	Hash         string          `json:"hash"`
	ApprovedAt   time.Time       `json:"approvedAt"`
	// ServerDescription is the server's own description of the approved
	// definition; absent in rows stored before it was kept.
	ServerDescription *string `json:"serverDescription,omitempty"`
	// State is "changed" or "gone"; absent means pinned.
	State string `json:"state,omitempty"`
	// Live is a changed tool's definition as last listed; absent when it
	// could not be read.
	Live *liveToolJSON `json:"live,omitempty"`
}

// liveToolJSON is a changed tool's definition as the server last listed
// it (canonical schema and annotations, as tool.Definition holds them).
type liveToolJSON struct {
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
}

// authPublicJSON is the auth_public column: the public part of an OAuth
// credential (server.OAuthView), null for the other kinds. Never a secret.
type authPublicJSON struct {
	TokenURL    string     `json:"tokenUrl,omitempty"`
	ClientID    string     `json:"clientId"`
	Scopes      []string   `json:"scopes"`
	Issuer      string     `json:"issuer,omitempty"`
	ClientAuth  string     `json:"clientAuth,omitempty"`
	ConnectedBy string     `json:"connectedBy,omitempty"`
	ConnectedAt *time.Time `json:"connectedAt,omitempty"`
	// ExpiresAt ends a connection without a refresh token.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	// Refused is why the last Connect was refused (a fixed code).
	Refused string `json:"refused,omitempty"`
}

func newAuthPublic(s *server.Server) *authPublicJSON {
	if !s.CredentialKind().IsOAuth() {
		return nil
	}
	v := s.OAuth()
	a := &authPublicJSON{TokenURL: v.TokenURL, ClientID: v.ClientID, Scopes: v.Scopes, Issuer: v.Issuer, ClientAuth: string(v.ClientAuth), ConnectedBy: v.ConnectedBy, Refused: v.Refused}
	if a.Scopes == nil {
		a.Scopes = []string{}
	}
	if !v.ConnectedAt.IsZero() {
		at := v.ConnectedAt
		a.ConnectedAt = &at
	}
	if !v.ExpiresAt.IsZero() {
		exp := v.ExpiresAt
		a.ExpiresAt = &exp
	}
	return a
}

func (a *authPublicJSON) view() server.OAuthView {
	if a == nil {
		return server.OAuthView{}
	}
	v := server.OAuthView{TokenURL: a.TokenURL, ClientID: a.ClientID, Scopes: a.Scopes, Issuer: a.Issuer, ClientAuth: server.ClientAuth(a.ClientAuth), ConnectedBy: a.ConnectedBy, Refused: a.Refused}
	if a.ConnectedAt != nil {
		v.ConnectedAt = *a.ConnectedAt
	}
	if a.ExpiresAt != nil {
		v.ExpiresAt = *a.ExpiresAt
	}
	return v
}

func newServerRow(s *server.Server) (serverRow, error) {
	tools, err := marshalTools(s)
	if err != nil {
		return serverRow{}, err
	}
	var listed json.RawMessage
	if names, ok := s.Listed(); ok {
		if names == nil {
			names = []string{}
		}
		if listed, err = json.Marshal(names); err != nil {
			return serverRow{}, fmt.Errorf("encode listed tools: %w", err)
		}
	}
	perMinute, _ := s.MaxCallsPerMinute().PerMinute()
	return serverRow{
		ID:                s.ID(),
		TenantID:          s.TenantID(),
		Name:              s.Name().String(),
		URL:               s.URL().String(),
		Enabled:           s.Enabled(),
		AuthType:          s.CredentialKind().String(),
		CredentialHint:    s.CredentialHint(),
		AuthPublic:        newAuthPublic(s),
		AcknowledgedAt:    s.AcknowledgedAt(),
		Tools:             tools,
		LastDiscoveryAt:   s.LastDiscoveryAt(),
		LastError:         s.LastError(),
		ListedTools:       listed,
		MaxCallsPerMinute: perMinute,
		CreatedAt:         s.CreatedAt(),
		UpdatedAt:         s.UpdatedAt(),
	}, nil
}

func marshalTools(s *server.Server) (json.RawMessage, error) {
	snaps := s.Tools()
	out := make([]toolJSON, 0, len(snaps))
	for _, t := range snaps {
		j := toolJSON{
			Name:         t.Name(),
			Description:  t.Description(),
			InputSchema:  t.InputSchema(),
			Annotations:  t.Annotations(),
			WriteCapable: t.WriteCapable(),
			Hash:         t.Hash(),
			ApprovedAt:   t.ApprovedAt(),
		}
		if d, ok := t.ServerDefinition(); ok {
			desc := d.Description()
			j.ServerDescription = &desc
		}
		if st := s.ToolStatus(t.Name()); st.State != server.ToolPinned {
			j.State = string(st.State)
			if st.Live != nil {
				j.Live = &liveToolJSON{Description: st.Live.Description(), InputSchema: st.Live.InputSchema(), Annotations: st.Live.Annotations()}
			}
		}
		out = append(out, j)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode tools: %w", err)
	}
	return b, nil
}

func (r serverRow) toDomain() (*server.Server, error) {
	var raw []toolJSON
	if len(r.Tools) > 0 {
		if err := json.Unmarshal(r.Tools, &raw); err != nil {
			return nil, fmt.Errorf("server %s: decode tools: %w", r.ID, err)
		}
	}
	tools := make([]tool.Snapshot, 0, len(raw))
	states := map[string]server.ToolStatus{}
	for _, t := range raw {
		snap, err := tool.UnmarshalSnapshotFromDatabase(t.Name, t.Description, t.InputSchema, t.Annotations,
			t.WriteCapable, t.Hash, t.ApprovedAt)
		if err != nil {
			return nil, fmt.Errorf("server %s: tool %q: %w", r.ID, t.Name, err)
		}
		if t.ServerDescription != nil {
			snap = snap.WithServerDescription(*t.ServerDescription)
		}
		tools = append(tools, snap)
		if t.State != "" {
			st := server.ToolStatus{State: server.ToolState(t.State)}
			if t.Live != nil {
				// A live definition that no longer parses is shown as
				// unreadable; the tool stays changed all the same.
				if d, err := tool.NewDefinition(t.Name, t.Live.Description, t.Live.InputSchema, t.Live.Annotations); err == nil {
					st.Live = &d
				}
			}
			states[t.Name] = st
		}
	}
	var listed []string
	if len(r.ListedTools) > 0 {
		if err := json.Unmarshal(r.ListedTools, &listed); err != nil {
			return nil, fmt.Errorf("server %s: decode listed tools: %w", r.ID, err)
		}
		if listed == nil {
			listed = []string{}
		}
	}
	s, err := server.UnmarshalServerFromDatabase(r.ID, r.TenantID, r.Name, r.URL, r.Enabled,
		r.AuthType, r.CredentialHint, r.AuthPublic.view(), r.AcknowledgedAt, r.LastDiscoveryAt, r.LastError, r.MaxCallsPerMinute, tools,
		r.CreatedAt, r.UpdatedAt)
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", r.ID, err)
	}
	s.RestoreToolStatesFromDatabase(states, listed)
	return s, nil
}

// serverRepo implements [ports.ServerRepo] inside one tenant transaction.
type serverRepo struct{ t *tenantTx }

func (r serverRepo) Insert(ctx context.Context, s *server.Server, encryptedCredential []byte, max int) error {
	if s.TenantID() != r.t.tenantID {
		return fmt.Errorf("postgres: insert server: server of tenant %s in a transaction of tenant %s", s.TenantID(), r.t.tenantID)
	}
	row, err := newServerRow(s)
	if err != nil {
		return fmt.Errorf("postgres: insert server: %w", err)
	}
	// A transaction-scoped advisory lock per tenant serialises inserts of
	// one tenant, so two transactions cannot both see max-1 servers and
	// both insert. Unlike a row lock on tenants it needs no UPDATE
	// privilege there: the tenant role may only read its tenant row.
	if _, err := r.t.db.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('mcp_servers:' || ?, 0))", r.t.tenantID); err != nil {
		return fmt.Errorf("postgres: insert server: lock tenant: %w", err)
	}
	var locked string
	err = r.t.db.NewRaw("SELECT id FROM tenants WHERE id = ?", r.t.tenantID).Scan(ctx, &locked)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("postgres: insert server: tenant: %w", ports.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("postgres: insert server: lock tenant: %w", err)
	}
	count, err := r.t.db.NewSelect().Table("mcp_servers").Where("tenant_id = ?", r.t.tenantID).Count(ctx)
	if err != nil {
		return fmt.Errorf("postgres: insert server: count: %w", err)
	}
	if count >= int64(max) {
		return ports.ErrTooManyServers
	}
	err = inSavepoint(ctx, r.t.tx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewInsert().Model(&row).
			Value("encrypted_credentials", "?", encryptedCredential).
			Returning("NULL").
			Exec(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: insert server: %w", mapServerWriteError(err))
	}
	return nil
}

func mapServerWriteError(err error) error {
	switch code, constraint := pgError(err); {
	case code == codeUniqueViolation && constraint == serverNameKey:
		return ports.ErrNameTaken
	case code == codeUniqueViolation:
		return ports.ErrConflict
	}
	return err
}

func (r serverRepo) Get(ctx context.Context, id string) (*server.Server, error) {
	row, err := r.selectRow(ctx, id, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: get server: %w", err)
	}
	return row.toDomain()
}

func (r serverRepo) selectRow(ctx context.Context, id string, forUpdate bool) (serverRow, error) {
	var row serverRow
	if !isUUID(id) {
		return row, ports.ErrNotFound
	}
	q := r.t.db.NewSelect().Model(&row).Where("s.id = ?", id).Where("s.tenant_id = ?", r.t.tenantID)
	if forUpdate {
		q = q.For("UPDATE")
	}
	err := q.Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return row, ports.ErrNotFound
	}
	return row, err
}

func (r serverRepo) List(ctx context.Context) ([]*server.Server, error) {
	var rows []serverRow
	err := r.t.db.NewSelect().Model(&rows).Where("s.tenant_id = ?", r.t.tenantID).
		OrderExpr("s.name ASC").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: list servers: %w", err)
	}
	out := make([]*server.Server, 0, len(rows))
	for _, row := range rows {
		s, err := row.toDomain()
		if err != nil {
			return nil, fmt.Errorf("postgres: list servers: %w", err)
		}
		out = append(out, s)
	}
	return out, nil
}

func (r serverRepo) Update(ctx context.Context, id string, fn func(s *server.Server) (ports.CredentialUpdate, error)) (*server.Server, error) {
	row, err := r.selectRow(ctx, id, true)
	if err != nil {
		return nil, fmt.Errorf("postgres: update server: %w", err)
	}
	s, err := row.toDomain()
	if err != nil {
		return nil, fmt.Errorf("postgres: update server: %w", err)
	}
	cred, err := fn(s)
	if err != nil {
		return nil, err
	}
	if s.ID() != row.ID || s.TenantID() != row.TenantID {
		return nil, fmt.Errorf("postgres: update server: fn changed the server's identity")
	}
	updated, err := newServerRow(s)
	if err != nil {
		return nil, fmt.Errorf("postgres: update server: %w", err)
	}
	var n int64
	err = inSavepoint(ctx, r.t.tx, func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewUpdate().Model(&updated).
			Column("name", "url", "enabled", "auth_type", "credential_hint", "auth_public", "acknowledged_at",
				"tools", "last_discovery_at", "last_error", "listed_tools", "max_calls_per_minute", "updated_at").
			WherePK()
		if cred.Replace {
			q = q.Set("encrypted_credentials = ?", cred.Encrypted)
		}
		res, err := q.Exec(ctx)
		if err != nil {
			return err
		}
		n, err = rowsAffected(res)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: update server: %w", mapServerWriteError(err))
	}
	if n != 1 {
		return nil, fmt.Errorf("postgres: update server: %d rows written, want 1", n)
	}
	return s, nil
}

func (r serverRepo) Delete(ctx context.Context, id string) error {
	if !isUUID(id) {
		return fmt.Errorf("postgres: delete server: %w", ports.ErrNotFound)
	}
	res, err := r.t.db.NewDelete().Model((*serverRow)(nil)).
		Where("id = ?", id).Where("tenant_id = ?", r.t.tenantID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("postgres: delete server: %w", err)
	}
	n, err := rowsAffected(res)
	if err != nil {
		return fmt.Errorf("postgres: delete server: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("postgres: delete server: %w", ports.ErrNotFound)
	}
	return nil
}

func (r serverRepo) Credential(ctx context.Context, id string) ([]byte, error) {
	if !isUUID(id) {
		return nil, fmt.Errorf("postgres: server credential: %w", ports.ErrNotFound)
	}
	var enc []byte
	err := r.t.db.NewRaw("SELECT encrypted_credentials FROM mcp_servers WHERE id = ? AND tenant_id = ?",
		id, r.t.tenantID).Scan(ctx, &enc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("postgres: server credential: %w", ports.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: server credential: %w", err)
	}
	return enc, nil
}

// ClaimDiscovery is one UPDATE that sets last_listing_at (and, for a
// discovery, last_discovery_at) to now() only when the previous live
// listing started at least interval ago (by the database's clock, so
// replicas agree). When it changes no row, a second query tells whether
// the server exists and how long is left.
func (r serverRepo) ClaimDiscovery(ctx context.Context, id string, interval time.Duration, l ports.Listing) (bool, time.Duration, error) {
	if !isUUID(id) {
		return false, 0, fmt.Errorf("postgres: claim discovery: %w", ports.ErrNotFound)
	}
	secs := interval.Seconds()
	// clock_timestamp(), not now(): a transaction that waited on the row
	// lock must judge by the time after the winner's claim, not by its own
	// start, or it could wait for more than the interval.
	res, err := r.t.db.NewRaw(`UPDATE mcp_servers SET last_listing_at = clock_timestamp(),
		    last_discovery_at = CASE WHEN ? THEN clock_timestamp() ELSE last_discovery_at END
		WHERE id = ? AND tenant_id = ?
		  AND (last_listing_at IS NULL OR last_listing_at <= clock_timestamp() - make_interval(secs => ?))`,
		l == ports.ListingDiscovery, id, r.t.tenantID, secs).Exec(ctx)
	if err != nil {
		return false, 0, fmt.Errorf("postgres: claim discovery: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, 0, nil
	}
	var left float64
	err = r.t.db.NewRaw(`SELECT greatest(0, extract(epoch FROM last_listing_at + make_interval(secs => ?) - clock_timestamp()))
		FROM mcp_servers WHERE id = ? AND tenant_id = ?`, secs, id, r.t.tenantID).Scan(ctx, &left)
	if errors.Is(err, sql.ErrNoRows) {
		return false, 0, fmt.Errorf("postgres: claim discovery: %w", ports.ErrNotFound)
	}
	if err != nil {
		return false, 0, fmt.Errorf("postgres: claim discovery: %w", err)
	}
	return false, min(time.Duration(left*float64(time.Second)), interval), nil
}

// RecordListTTL stores the hint in milliseconds (NULL for none), capped
// at a day.
func (r serverRepo) RecordListTTL(ctx context.Context, id string, ttl time.Duration) error {
	if !isUUID(id) {
		return fmt.Errorf("postgres: record list ttl: %w", ports.ErrNotFound)
	}
	var ms any
	if ttl > 0 {
		ms = min(ttl, 24*time.Hour).Milliseconds()
	}
	if _, err := r.t.db.NewRaw(`UPDATE mcp_servers SET list_ttl_ms = ? WHERE id = ? AND tenant_id = ?`, ms, id, r.t.tenantID).Exec(ctx); err != nil {
		return fmt.Errorf("postgres: record list ttl: %w", err)
	}
	return nil
}

// ClaimConnectionTest serialises the tenant's claims with a
// transaction-scoped advisory lock (the tenant role may not lock its
// tenant row), deletes the tenant's tests that left the window, counts
// the rest and, below max, records this one; all by clock_timestamp(),
// the time after the lock, so replicas agree and a claim that waited is
// judged when it runs.
func (r serverRepo) ClaimConnectionTest(ctx context.Context, limit int, window time.Duration) (bool, time.Duration, error) {
	secs := window.Seconds()
	if _, err := r.t.db.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('mcp_connection_tests:' || ?, 0))", r.t.tenantID); err != nil {
		return false, 0, fmt.Errorf("postgres: claim connection test: lock tenant: %w", err)
	}
	if _, err := r.t.db.NewRaw(`DELETE FROM mcp_connection_tests
		WHERE tenant_id = ? AND tested_at <= clock_timestamp() - make_interval(secs => ?)`, r.t.tenantID, secs).Exec(ctx); err != nil {
		return false, 0, fmt.Errorf("postgres: claim connection test: %w", err)
	}
	var (
		n    int
		left sql.NullFloat64
	)
	err := r.t.db.NewRaw(`SELECT count(*), extract(epoch FROM min(tested_at) + make_interval(secs => ?) - clock_timestamp())
		FROM mcp_connection_tests WHERE tenant_id = ?`, secs, r.t.tenantID).Scan(ctx, &n, &left)
	if err != nil {
		return false, 0, fmt.Errorf("postgres: claim connection test: %w", err)
	}
	if n >= limit {
		after := window
		if left.Valid {
			after = min(max(time.Duration(left.Float64*float64(time.Second)), 0), window)
		}
		return false, after, nil
	}
	if _, err := r.t.db.NewRaw("INSERT INTO mcp_connection_tests (tenant_id, tested_at) VALUES (?, clock_timestamp())", r.t.tenantID).Exec(ctx); err != nil {
		return false, 0, fmt.Errorf("postgres: claim connection test: %w", err)
	}
	return true, 0, nil
}

// TakeCall is one statement, one round trip: the upsert adds one to the
// server's row of the current window (by clock_timestamp(), the time the
// statement runs, not the transaction's start) only while its count is
// below limit, so concurrent takes of every replica queue on that row and
// exactly limit of them succeed; the DELETE drops the server's earlier
// windows, skipping rows another take holds (it never waits, so two
// takes at a window's edge cannot deadlock). A missing server, or another
// tenant's (row-level security hides it), takes nothing and is
// ErrNotFound; the foreign key (tenant_id, server_id) holds it too.
func (r serverRepo) TakeCall(ctx context.Context, serverID string, limit int, window time.Duration) (bool, error) {
	if !isUUID(serverID) {
		return false, fmt.Errorf("postgres: take call: %w", ports.ErrNotFound)
	}
	if window <= 0 {
		return false, fmt.Errorf("postgres: take call: window %v is not positive", window)
	}
	secs := window.Seconds()
	var (
		found bool
		taken int
	)
	err := r.t.db.NewRaw(`WITH w AS (
		    SELECT to_timestamp(floor(extract(epoch FROM clock_timestamp()) / ?) * ?) AS minute
		), srv AS (
		    SELECT id, tenant_id FROM mcp_servers WHERE id = ? AND tenant_id = ?
		), taken AS (
		    INSERT INTO mcp_call_minutes AS m (tenant_id, server_id, minute, calls)
		    SELECT srv.tenant_id, srv.id, w.minute, 1 FROM srv, w WHERE ? > 0
		    ON CONFLICT (server_id, minute) DO UPDATE SET calls = m.calls + 1 WHERE m.calls < ?
		    RETURNING 1
		), earlier AS (
		    DELETE FROM mcp_call_minutes WHERE (server_id, minute) IN (
		        SELECT c.server_id, c.minute FROM mcp_call_minutes c, w
		        WHERE c.server_id = ? AND c.tenant_id = ? AND c.minute < w.minute
		        FOR UPDATE OF c SKIP LOCKED)
		)
		SELECT EXISTS (SELECT 1 FROM srv), (SELECT count(*) FROM taken)`,
		secs, secs, serverID, r.t.tenantID, limit, limit, serverID, r.t.tenantID).Scan(ctx, &found, &taken)
	if code, _ := pgError(err); code == codeForeignKeyViolation {
		// The server was deleted while the call was counted.
		return false, fmt.Errorf("postgres: take call: %w", ports.ErrNotFound)
	}
	if err != nil {
		return false, fmt.Errorf("postgres: take call: %w", err)
	}
	if !found {
		return false, fmt.Errorf("postgres: take call: %w", ports.ErrNotFound)
	}
	return taken == 1, nil
}
