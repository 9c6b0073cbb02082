// Package portfake holds in-memory fakes of the ports, shared by the
// application modules' tests and by the port contract tests (which run
// the same suite against these fakes and against PostgreSQL). A fake keeps
// what it stores in exported fields, so a test can seed it and look into
// it. Fakes are not safe for concurrent use unless they say so; Tenants
// serialises the transactions it runs.
package portfake

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	uid "github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
)

// Tenants is an in-memory ports.Tenants: one Tx per tenant. It
// serialises transactions (like the row lock the real store takes) and
// does not roll back; use-case tests that need atomicity use PostgreSQL.
type Tenants struct {
	mu  sync.Mutex
	Txs map[string]*Tx
	// NewTx builds the repos of a tenant seen for the first time.
	NewTx func(tenantID string) *Tx
}

type Tx struct {
	ServerRepo     ports.ServerRepo
	RepositoryRepo ports.RepositoryRepo
	PolicyRepo     ports.PolicyRepo
	AuditLog       *Audit
	CallLog        *Calls
	ReviewRepo     ports.ReviewRepo
	SettingsRepo   *Settings
	PromptLogRepo  *PromptLogs
	OAuthStateRepo *OAuthStates
}

func (t *Tx) Servers() ports.ServerRepo          { return t.ServerRepo }
func (t *Tx) Repositories() ports.RepositoryRepo { return t.RepositoryRepo }
func (t *Tx) Policies() ports.PolicyRepo         { return t.PolicyRepo }
func (t *Tx) Audit() ports.AuditLog              { return t.AuditLog }
func (t *Tx) Calls() ports.CallLog               { return t.CallLog }
func (t *Tx) Reviews() ports.ReviewRepo          { return t.ReviewRepo }
func (t *Tx) Settings() ports.SettingsRepo       { return t.SettingsRepo }
func (t *Tx) PromptLogs() ports.PromptLogRepo    { return t.PromptLogRepo }
func (t *Tx) OAuthStates() ports.OAuthStateRepo  { return t.OAuthStateRepo }

// ReadInTenant is InTenant (the fake has no read-only mode).
func (f *Tenants) ReadInTenant(ctx context.Context, tenantID string, fn func(context.Context, ports.TenantTx) error) error {
	return f.InTenant(ctx, tenantID, fn)
}

func (f *Tenants) InTenant(ctx context.Context, tenantID string, fn func(context.Context, ports.TenantTx) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.Txs == nil {
		f.Txs = map[string]*Tx{}
	}
	tx, ok := f.Txs[tenantID]
	if !ok {
		tx = f.NewTx(tenantID)
		if tx.AuditLog == nil {
			tx.AuditLog = &Audit{}
		}
		if tx.CallLog == nil {
			tx.CallLog = &Calls{}
		}
		if tx.SettingsRepo == nil {
			tx.SettingsRepo = &Settings{Value: settings.Default()}
		}
		if tx.PromptLogRepo == nil {
			tx.PromptLogRepo = &PromptLogs{}
		}
		if tx.OAuthStateRepo == nil {
			servers, _ := tx.ServerRepo.(*Servers)
			tx.OAuthStateRepo = &OAuthStates{Servers: servers}
		}
		f.Txs[tenantID] = tx
	}
	return fn(ctx, tx)
}

// Audit records events in memory.
type Audit struct{ Events []ports.AuditEvent }

func (a *Audit) Append(_ context.Context, e ports.AuditEvent) error {
	a.Events = append(a.Events, e)
	return nil
}

// Recent returns the events newest first (by At, the last appended first
// on a tie), their details as the store's JSON column gives them back.
// Events keeps them as appended.
func (a *Audit) Recent(_ context.Context, limit int) ([]ports.AuditEvent, error) {
	out := slices.Clone(a.Events)
	slices.Reverse(out)
	slices.SortStableFunc(out, func(x, y ports.AuditEvent) int { return y.At.Compare(x.At) })
	out = firstN(out, limit)
	for i := range out {
		d, err := viaJSON(out[i].Details)
		if err != nil {
			return nil, err
		}
		out[i].Details = d
	}
	return out, nil
}

// viaJSON returns details as a JSON column stores them: numbers as
// float64, slices as []any.
func viaJSON(details map[string]any) (map[string]any, error) {
	out := map[string]any{}
	if details == nil {
		return out, nil
	}
	b, err := json.Marshal(details)
	if err != nil {
		return nil, err
	}
	return out, json.Unmarshal(b, &out)
}

// Settings holds one tenant's settings.
type Settings struct{ Value settings.Settings }

func (f *Settings) Get(context.Context) (settings.Settings, error) { return f.Value, nil }

// GetForUpdate is Get: Tenants serialises the fake's transactions.
func (f *Settings) GetForUpdate(ctx context.Context) (settings.Settings, error) { return f.Get(ctx) }
func (f *Settings) Put(_ context.Context, s settings.Settings) error {
	if s.IsZero() {
		return errors.New("fake: put zero settings")
	}
	f.Value = s
	return nil
}

// PromptLogs keeps one tenant's prompt logs in memory.
// When Reviews is set, a log needs a run of the tenant (ErrNotFound). When
// Rotator is set, each log is also a row of the rotator, which may
// re-seal it.
type PromptLogs struct {
	Logs    []ports.PromptLog
	Reviews ports.ReviewRepo
	Rotator *PromptRotator
	ids     []string // the rotator's id of each of Logs
}

func (f *PromptLogs) Insert(ctx context.Context, l ports.PromptLog) error {
	if f.Reviews != nil {
		if _, err := f.Reviews.Get(ctx, l.ReviewID); err != nil {
			return fmt.Errorf("fake: prompt log: review: %w", err)
		}
	}
	f.Logs = append(f.Logs, l)
	if f.Rotator != nil {
		id := newUUID()
		f.ids = append(f.ids, id)
		f.Rotator.Logs = append(f.Rotator.Logs, ports.SealedPromptLog{ID: id, ReviewID: l.ReviewID, Sealed: bytes.Clone(l.Sealed)})
	}
	return nil
}

func (f *PromptLogs) List(_ context.Context, reviewID string, now time.Time) ([]ports.PromptLog, error) {
	var out []ports.PromptLog
	for i, l := range f.Logs {
		if l.ReviewID == reviewID && l.ExpiresAt.After(now) {
			if f.Rotator != nil && i < len(f.ids) {
				l.Sealed = f.Rotator.sealed(f.ids[i])
			}
			out = append(out, l)
		}
	}
	return out, nil
}

func (f *PromptLogs) DeleteAll(context.Context) (int64, error) {
	n := int64(len(f.Logs))
	if f.Rotator != nil {
		f.Rotator.Logs = slices.DeleteFunc(f.Rotator.Logs, func(l ports.SealedPromptLog) bool { return slices.Contains(f.ids, l.ID) })
	}
	f.Logs, f.ids = nil, nil
	return n, nil
}

// Clock is a ports.Clock that tests move by hand.
type Clock struct{ At time.Time }

func (c *Clock) Now() time.Time { return c.At }

// Calls records tool calls in memory.
type Calls struct{ Records []ports.ToolCall }

func (c *Calls) Record(_ context.Context, call ports.ToolCall) error {
	c.Records = append(c.Records, call)
	return nil
}

// Recent returns a server's records newest first (by CreatedAt), with
// the duration in whole milliseconds as the store keeps it; Records keeps
// them as recorded.
func (c *Calls) Recent(_ context.Context, serverID string, limit int) ([]ports.ToolCall, error) {
	return c.stored(func(r ports.ToolCall) bool { return r.ServerID == serverID }, -1, limit), nil
}

// ForReview returns a run's records oldest first (by CreatedAt).
func (c *Calls) ForReview(_ context.Context, reviewID string, limit int) ([]ports.ToolCall, error) {
	return c.stored(func(r ports.ToolCall) bool { return reviewID != "" && r.ReviewID == reviewID }, 1, limit), nil
}

// stored returns at most limit of the records keep accepts, as the store
// gives them back, sorted by time (order 1 oldest first, -1 newest first;
// PostgreSQL leaves the order of equal times open, the fake keeps the
// order of recording).
func (c *Calls) stored(keep func(ports.ToolCall) bool, order, limit int) []ports.ToolCall {
	var out []ports.ToolCall
	for _, r := range c.Records {
		if keep(r) {
			r.Duration = r.Duration.Truncate(time.Millisecond)
			out = append(out, r)
		}
	}
	if order < 0 { // ties: the last recorded first
		slices.Reverse(out)
	}
	slices.SortStableFunc(out, func(x, y ports.ToolCall) int { return order * x.CreatedAt.Compare(y.CreatedAt) })
	return firstN(out, limit)
}

func (c *Calls) ReviewUsage(_ context.Context, reviewID string) (ports.ReviewUsage, error) {
	var u ports.ReviewUsage
	for _, r := range c.Records {
		if reviewID == "" || r.ReviewID != reviewID {
			continue
		}
		if r.Status != review.CallBudgetExhausted && r.ArgumentsHash != "" {
			u.Reserved++
		}
		switch r.Status {
		case review.CallOK, review.CallError:
			u.Sent++
			u.Bytes += min(r.ResponseBytes, limits.CallReservation)
		case review.CallTooLarge:
			u.Sent++
			u.Bytes += limits.CallReservation
		case review.CallUnavailable:
			u.Sent++
		case review.CallBlocked:
			u.Blocked++
		}
	}
	return u, nil
}

// Servers is an in-memory ports.ServerRepo of one tenant. Calls are
// serialised by Tenants; it keeps copies so a caller's later changes
// to an entity do not reach the "stored" row.
//
// When TenantID is set, Insert refuses a server of another tenant; when
// Calls is set, Delete deletes the server's call records too.
type Servers struct {
	Rows     map[string]*server.Server
	Creds    map[string][]byte
	TenantID string
	Calls    *Calls
	// Err, when set, is returned by every call (a failing database).
	Err error
	// Clock is the database's clock for ClaimDiscovery.
	Clock ports.Clock
}

func NewServers() *Servers {
	return &Servers{Rows: map[string]*server.Server{}, Creds: map[string][]byte{}}
}

func cloneServer(s *server.Server) *server.Server { c := *s; return &c }

func (r *Servers) nameTaken(name server.Name, except string) bool {
	for id, s := range r.Rows {
		if id != except && s.Name() == name {
			return true
		}
	}
	return false
}

func (r *Servers) Insert(_ context.Context, s *server.Server, enc []byte, max int) error {
	if r.Err != nil {
		return r.Err
	}
	if r.TenantID != "" && s.TenantID() != r.TenantID {
		return fmt.Errorf("fake: insert: server of tenant %s in tenant %s", s.TenantID(), r.TenantID)
	}
	if len(r.Rows) >= max {
		return ports.ErrTooManyServers
	}
	if r.nameTaken(s.Name(), "") {
		return fmt.Errorf("insert: %w", ports.ErrNameTaken)
	}
	if _, used := r.Rows[s.ID()]; used {
		return fmt.Errorf("insert: %w", ports.ErrConflict)
	}
	r.Rows[s.ID()] = cloneServer(s)
	if enc != nil {
		r.Creds[s.ID()] = bytes.Clone(enc)
	}
	return nil
}

func (r *Servers) Get(_ context.Context, id string) (*server.Server, error) {
	if r.Err != nil {
		return nil, r.Err
	}
	s, ok := r.Rows[id]
	if !ok {
		return nil, ports.ErrNotFound
	}
	return cloneServer(s), nil
}

func (r *Servers) List(_ context.Context) ([]*server.Server, error) {
	if r.Err != nil {
		return nil, r.Err
	}
	var out []*server.Server
	for _, s := range r.Rows {
		out = append(out, cloneServer(s))
	}
	slices.SortFunc(out, func(a, b *server.Server) int { return strings.Compare(a.Name().String(), b.Name().String()) })
	return out, nil
}

func (r *Servers) Update(_ context.Context, id string, fn func(*server.Server) (ports.CredentialUpdate, error)) (*server.Server, error) {
	if r.Err != nil {
		return nil, r.Err
	}
	s, ok := r.Rows[id]
	if !ok {
		return nil, ports.ErrNotFound
	}
	c := cloneServer(s)
	cu, err := fn(c)
	if err != nil {
		return nil, err
	}
	if r.nameTaken(c.Name(), id) {
		return nil, ports.ErrNameTaken
	}
	r.Rows[id] = cloneServer(c)
	if cu.Replace {
		if cu.Encrypted == nil {
			delete(r.Creds, id)
		} else {
			r.Creds[id] = bytes.Clone(cu.Encrypted)
		}
	}
	return c, nil
}

func (r *Servers) Delete(_ context.Context, id string) error {
	if r.Err != nil {
		return r.Err
	}
	if _, ok := r.Rows[id]; !ok {
		return ports.ErrNotFound
	}
	delete(r.Rows, id)
	delete(r.Creds, id)
	if r.Calls != nil {
		r.Calls.Records = slices.DeleteFunc(r.Calls.Records, func(c ports.ToolCall) bool { return c.ServerID == id })
	}
	return nil
}

func (r *Servers) Credential(_ context.Context, id string) ([]byte, error) {
	if _, ok := r.Rows[id]; !ok {
		return nil, ports.ErrNotFound
	}
	return bytes.Clone(r.Creds[id]), nil
}

// Resolver answers from a table; a host not in it does not resolve.
type Resolver struct {
	mu      sync.Mutex
	Addrs   map[string][]netip.Addr
	Lookups []string
}

func (f *Resolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Lookups = append(f.Lookups, host)
	a, ok := f.Addrs[host]
	if !ok {
		return nil, fmt.Errorf("lookup %s: no such host", host)
	}
	return a, nil
}

// Cipher is a transparent stand-in for the key ring: "key|aad|hex".
// It checks key ids and the associated data like the real one, without
// the cryptography (adapters/crypto has its own tests).
type Cipher struct {
	Keys []string // keys[0] is the primary; empty: no keys
}

var ErrNoKeys = errors.New("fake: no keys")

func (c *Cipher) Seal(plain, aad []byte) ([]byte, error) {
	if len(c.Keys) == 0 {
		return nil, ErrNoKeys
	}
	return []byte(c.Keys[0] + "|" + string(aad) + "|" + hex.EncodeToString(plain)), nil
}

func (c *Cipher) Open(sealed, aad []byte) ([]byte, error) {
	if len(c.Keys) == 0 {
		return nil, ErrNoKeys
	}
	parts := strings.SplitN(string(sealed), "|", 3)
	if len(parts) != 3 {
		return nil, errors.New("fake: malformed")
	}
	if !slices.Contains(c.Keys, parts[0]) {
		return nil, errors.New("fake: unknown key")
	}
	if parts[1] != string(aad) {
		return nil, errors.New("fake: wrong aad")
	}
	return hex.DecodeString(parts[2])
}

func (c *Cipher) IsPrimary(sealed []byte) bool {
	return len(c.Keys) > 0 && strings.HasPrefix(string(sealed), c.Keys[0]+"|")
}

// Rotator is an in-memory ports.CredentialRotator.
type Rotator struct {
	Creds map[string][]byte
	// beforeReplace runs before each Replace (to simulate a concurrent writer).
	BeforeReplace func(serverID string)
	Batches       int
}

func (f *Rotator) Batch(_ context.Context, after string, limit int) ([]ports.EncryptedCredential, error) {
	f.Batches++
	ids := make([]string, 0, len(f.Creds))
	for id := range f.Creds {
		if id > after {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if len(ids) > limit {
		ids = ids[:limit]
	}
	out := make([]ports.EncryptedCredential, len(ids))
	for i, id := range ids {
		out[i] = ports.EncryptedCredential{ServerID: id, Encrypted: bytes.Clone(f.Creds[id])}
	}
	return out, nil
}

func (f *Rotator) Replace(_ context.Context, id string, old, enc []byte) (bool, error) {
	if f.BeforeReplace != nil {
		f.BeforeReplace(id)
	}
	if cur, ok := f.Creds[id]; !ok || old == nil || !bytes.Equal(cur, old) {
		return false, nil
	}
	f.Creds[id] = bytes.Clone(enc)
	return true, nil
}

// ClaimDiscovery grants a claim when the last discovery is at least
// interval older than the fake's clock (nil: always the zero time).
func (r *Servers) ClaimDiscovery(_ context.Context, id string, interval time.Duration) (bool, time.Duration, error) {
	if r.Err != nil {
		return false, 0, r.Err
	}
	s, ok := r.Rows[id]
	if !ok {
		return false, 0, ports.ErrNotFound
	}
	now := r.claimNow()
	if last := s.LastDiscoveryAt(); !last.IsZero() && now.Sub(last) < interval {
		return false, interval - now.Sub(last), nil
	}
	s.RecordDiscovery(now, s.LastError())
	return true, 0, nil
}

func (r *Servers) claimNow() time.Time {
	if r.Clock == nil {
		return time.Time{}
	}
	return r.Clock.Now()
}

// Repositories is an in-memory ports.RepositoryRepo of one tenant.
type Repositories struct{ ByID map[string]ports.Repository }

func (f *Repositories) Insert(_ context.Context, r ports.Repository) error {
	if _, used := f.ByID[r.ID]; used {
		return ports.ErrConflict
	}
	for _, have := range f.ByID {
		if have.Name == r.Name {
			return ports.ErrConflict
		}
	}
	f.ByID[r.ID] = r
	return nil
}

func (f *Repositories) Get(_ context.Context, id string) (ports.Repository, error) {
	r, ok := f.ByID[id]
	if !ok {
		return ports.Repository{}, ports.ErrNotFound
	}
	return r, nil
}

func (f *Repositories) SetVisibility(_ context.Context, id string, v policy.Visibility) (ports.Repository, error) {
	r, ok := f.ByID[id]
	if !ok {
		return ports.Repository{}, ports.ErrNotFound
	}
	r.Visibility = v
	f.ByID[id] = r
	return r, nil
}

func (f *Repositories) List(_ context.Context, after string, limit int) ([]ports.Repository, error) {
	return pageAfter(slices.Collect(maps.Values(f.ByID)), func(r ports.Repository) string { return r.Name }, after, limit), nil
}

// Policies is an in-memory ports.PolicyRepo of one tenant; servers
// are the ids of the tenant's servers.
//
// When RepositoryRepo is set, PutRepository needs a repository of the
// tenant (ErrNotFound); when ServerRepo is set, ServersExist also reads
// it. Ids compare case-insensitively, like UUIDs.
type Policies struct {
	Def            *policy.McpSection
	Repos          map[string]policy.McpSection
	Servers        map[string]bool
	Asked          [][]string
	RepositoryRepo ports.RepositoryRepo
	ServerRepo     ports.ServerRepo
}

func (f *Policies) Default(context.Context) (*policy.McpSection, error) { return f.Def, nil }

func (f *Policies) PutDefault(_ context.Context, s policy.McpSection) error {
	if s.Mode() == policy.ModeInherit {
		return errors.New("fake: a tenant default cannot inherit")
	}
	f.Def = &s
	return nil
}

func (f *Policies) Repository(_ context.Context, id string) (policy.McpSection, bool, error) {
	s, ok := f.Repos[id]
	return s, ok, nil
}

func (f *Policies) PutRepository(ctx context.Context, id string, s policy.McpSection) error {
	if f.RepositoryRepo != nil {
		if _, err := f.RepositoryRepo.Get(ctx, id); err != nil {
			return fmt.Errorf("fake: put repository policy: %w", err)
		}
	}
	f.Repos[id] = s
	return nil
}

func (f *Policies) Repositories(_ context.Context, ids []string) (*policy.McpSection, map[string]policy.McpSection, error) {
	out := map[string]policy.McpSection{}
	for _, id := range ids {
		if s, ok := f.Repos[id]; ok {
			out[id] = s
		}
	}
	return f.Def, out, nil
}

func (f *Policies) ServersExist(ctx context.Context, ids []string) (map[string]bool, error) {
	f.Asked = append(f.Asked, ids)
	out := map[string]bool{}
	for _, raw := range ids {
		id, ok := uid.Parse(raw)
		if !ok {
			out[raw] = false
			continue
		}
		out[raw] = f.Servers[id]
		if f.ServerRepo != nil && !out[raw] {
			_, err := f.ServerRepo.Get(ctx, id)
			out[raw] = err == nil
		}
	}
	return out, nil
}

// Accounts is an in-memory ports.Accounts. It keeps what CreateToken
// received, so tests can check that no plaintext token reaches it.
// Expiry is judged with Now (time.Now when nil).
type Accounts struct {
	Tenants map[string]string
	Tokens  map[string]ports.Principal // key: string(hash)
	Infos   map[string]ports.TokenInfo // key: token id
	Hashes  [][]byte
	Now     func() time.Time
	nextID  int
}

func (f *Accounts) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func NewAccounts() *Accounts {
	return &Accounts{Tenants: map[string]string{}, Tokens: map[string]ports.Principal{}}
}

func (f *Accounts) CreateTenant(_ context.Context, name string) (string, error) {
	f.nextID++
	id := UUID(f.nextID)
	f.Tenants[id] = name
	return id, nil
}

func (f *Accounts) CreateToken(ctx context.Context, tenantID string, hash []byte, perms []string) (string, error) {
	return f.IssueToken(ctx, ports.NewToken{TenantID: tenantID, Hash: hash, Permissions: perms})
}

func (f *Accounts) IssueToken(_ context.Context, t ports.NewToken) (string, error) {
	tenantID, hash, perms := t.TenantID, t.Hash, t.Permissions
	if _, ok := f.Tenants[tenantID]; !ok {
		return "", ports.ErrNotFound
	}
	if len(hash) != 32 {
		return "", fmt.Errorf("fake: token hash has %d bytes, want 32 (SHA-256)", len(hash))
	}
	if _, used := f.Tokens[string(hash)]; used {
		return "", ports.ErrConflict
	}
	f.nextID++
	id := UUID(f.nextID)
	f.Hashes = append(f.Hashes, append([]byte{}, hash...))
	f.Tokens[string(hash)] = ports.Principal{TokenID: id, TenantID: tenantID, Permissions: perms}
	if f.Infos == nil {
		f.Infos = map[string]ports.TokenInfo{}
	}
	if perms == nil {
		perms = []string{}
	}
	f.Infos[id] = ports.TokenInfo{ID: id, TenantID: tenantID, Label: t.Label, Permissions: slices.Clone(perms), CreatedAt: f.now(), ExpiresAt: t.ExpiresAt}
	return id, nil
}

func (f *Accounts) LookupToken(_ context.Context, hash []byte) (ports.Principal, error) {
	p, ok := f.Tokens[string(hash)]
	if !ok {
		return ports.Principal{}, ports.ErrNotFound
	}
	if in, ok := f.Infos[p.TokenID]; ok {
		if !in.ExpiresAt.IsZero() && !f.now().Before(in.ExpiresAt) {
			return ports.Principal{}, ports.ErrNotFound
		}
		in.LastUsedAt = f.now()
		f.Infos[p.TokenID] = in
	}
	return p, nil
}

func (f *Accounts) ListTokens(_ context.Context, tenantID string) ([]ports.TokenInfo, error) {
	out := []ports.TokenInfo{}
	for _, in := range f.Infos {
		if in.TenantID == tenantID {
			in.Permissions = slices.Clone(in.Permissions)
			out = append(out, in)
		}
	}
	slices.SortFunc(out, func(a, b ports.TokenInfo) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

func (f *Accounts) RevokeToken(_ context.Context, tenantID, id string) (ports.TokenInfo, error) {
	in, ok := f.Infos[id]
	if !ok || (tenantID != "" && in.TenantID != tenantID) {
		return ports.TokenInfo{}, ports.ErrNotFound
	}
	delete(f.Infos, id)
	for h, p := range f.Tokens {
		if p.TokenID == id {
			delete(f.Tokens, h)
		}
	}
	return in, nil
}

// UUID is a deterministic canonical UUID for test ids.
func UUID(n int) string {
	const tmpl = "00000000-0000-4000-8000-000000000000"
	s := []byte(tmpl)
	d := []byte(itoa(n))
	copy(s[len(s)-len(d):], d)
	return string(s)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// Reviews is an in-memory ports.ReviewRepo.
// When Repos is set, a run needs a repository of the tenant (ErrNotFound).
type Reviews struct {
	Runs  map[string]ports.ReviewRun
	Repos ports.RepositoryRepo
}

// Insert stores r queued, without a result.
func (f *Reviews) Insert(ctx context.Context, r ports.ReviewRun) error {
	if _, used := f.Runs[r.ID]; used {
		return ports.ErrConflict
	}
	if f.Repos != nil {
		if _, err := f.Repos.Get(ctx, r.RepositoryID); err != nil {
			return fmt.Errorf("fake: insert review: repository: %w", err)
		}
	}
	f.Runs[r.ID] = ports.ReviewRun{ID: r.ID, RepositoryID: r.RepositoryID, Status: review.Queued, Title: r.Title,
		Description: r.Description, Diff: r.Diff, Files: r.Files, CreatedAt: r.CreatedAt}
	return nil
}
func (f *Reviews) Get(_ context.Context, id string) (ports.ReviewRun, error) {
	r, ok := f.Runs[id]
	if !ok {
		return r, ports.ErrNotFound
	}
	return r, nil
}

// Recent returns a repository's runs newest first (by CreatedAt, then id
// descending), without their diff and files.
func (f *Reviews) Recent(_ context.Context, repositoryID string, limit int) ([]ports.ReviewRun, error) {
	var out []ports.ReviewRun
	for _, r := range f.Runs {
		if r.RepositoryID == repositoryID {
			r.Diff, r.Files = "", nil
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(x, y ports.ReviewRun) int {
		return cmp.Or(y.CreatedAt.Compare(x.CreatedAt), strings.Compare(y.ID, x.ID))
	})
	return firstN(out, limit), nil
}
func (f *Reviews) Start(_ context.Context, id string, at time.Time) (ports.ReviewRun, error) {
	r, ok := f.Runs[id]
	if !ok {
		return r, ports.ErrNotFound
	}
	if r.Status.Finished() {
		return r, ports.ErrConflict
	}
	if r.StartedAt.IsZero() { // a retry keeps the first start
		r.StartedAt = at
	}
	r.Status = review.Running
	f.Runs[id] = r
	return r, nil
}

// Finish stores the result of a queued or running run; a finished run
// keeps its result (ErrConflict).
func (f *Reviews) Finish(_ context.Context, r ports.ReviewRun) error {
	if r.Status != review.Done && r.Status != review.Failed {
		return fmt.Errorf("fake: finish review: status %q", r.Status)
	}
	run, ok := f.Runs[r.ID]
	switch {
	case !ok:
		return ports.ErrNotFound
	case run.Status == review.Done || run.Status == review.Failed:
		return ports.ErrConflict
	}
	run.Status, run.PromptVersion, run.Findings, run.Summary, run.Stats, run.FinishedAt =
		r.Status, r.PromptVersion, r.Findings, r.Summary, r.Stats, r.FinishedAt
	f.Runs[r.ID] = run
	return nil
}

// PromptRotator is an in-memory ports.PromptLogRotator.
type PromptRotator struct{ Logs []ports.SealedPromptLog }

func (f *PromptRotator) Batch(_ context.Context, after string, limit int) ([]ports.SealedPromptLog, error) {
	return pageAfter(f.Logs, func(l ports.SealedPromptLog) string { return l.ID }, after, limit), nil
}

func (f *PromptRotator) sealed(id string) []byte {
	for _, l := range f.Logs {
		if l.ID == id {
			return l.Sealed
		}
	}
	return nil
}

func (f *PromptRotator) Replace(_ context.Context, id string, old, sealed []byte) (bool, error) {
	for i, l := range f.Logs {
		if l.ID == id && old != nil && string(l.Sealed) == string(old) {
			f.Logs[i].Sealed = sealed
			return true, nil
		}
	}
	return false, nil
}

// logIDs numbers the prompt logs of every PromptLogs, so that their ids
// are unique across tenants and sort in the order they were written.
var logIDs atomic.Int64

func newUUID() string { return UUID(int(logIDs.Add(1))) }

// pageAfter is one page of keyset paging: the items whose key sorts after
// after, in key order (bytes), at most limit.
func pageAfter[T any](items []T, key func(T) string, after string, limit int) []T {
	var out []T
	for _, it := range items {
		if key(it) > after {
			out = append(out, it)
		}
	}
	slices.SortFunc(out, func(x, y T) int { return strings.Compare(key(x), key(y)) })
	return firstN(out, limit)
}

// firstN returns at most the first n items (none for n ≤ 0).
func firstN[T any](items []T, n int) []T { return items[:max(0, min(n, len(items)))] }

// OAuthStates holds one tenant's pending code-flow connections by the hex
// of their state hash. A state of a server that no longer is in Servers
// is gone, as the foreign key's cascade deletes it (nil Servers: every
// server exists).
type OAuthStates struct {
	Rows    map[string]ports.OAuthState
	Servers *Servers
	// Err, when set, is returned by every call.
	Err error
}

func (f *OAuthStates) serverExists(id string) bool {
	if f.Servers == nil {
		return true
	}
	_, ok := f.Servers.Rows[id]
	return ok
}

func cloneState(st ports.OAuthState) ports.OAuthState {
	st.StateHash = bytes.Clone(st.StateHash)
	st.SessionHash = bytes.Clone(st.SessionHash)
	st.Sealed = bytes.Clone(st.Sealed)
	st.CredentialHash = bytes.Clone(st.CredentialHash)
	return st
}

func (f *OAuthStates) Insert(_ context.Context, st ports.OAuthState) error {
	if f.Err != nil {
		return f.Err
	}
	if len(st.StateHash) != 32 || len(st.SessionHash) != 32 || len(st.Sealed) == 0 || !st.ExpiresAt.After(st.CreatedAt) {
		return errors.New("fake: malformed oauth state")
	}
	if !uid.Valid(st.ServerID) || !f.serverExists(st.ServerID) {
		return ports.ErrNotFound
	}
	if f.Rows == nil {
		f.Rows = map[string]ports.OAuthState{}
	}
	key := hex.EncodeToString(st.StateHash)
	if _, ok := f.Rows[key]; ok {
		return ports.ErrConflict
	}
	for k, old := range f.Rows {
		if old.ExpiresAt.Before(st.CreatedAt) {
			delete(f.Rows, k)
		}
	}
	f.Rows[key] = cloneState(st)
	return nil
}

func (f *OAuthStates) Take(_ context.Context, stateHash []byte) (ports.OAuthState, error) {
	if f.Err != nil {
		return ports.OAuthState{}, f.Err
	}
	key := hex.EncodeToString(stateHash)
	st, ok := f.Rows[key]
	if !ok {
		return ports.OAuthState{}, ports.ErrNotFound
	}
	delete(f.Rows, key)
	if !f.serverExists(st.ServerID) {
		return ports.OAuthState{}, ports.ErrNotFound
	}
	return cloneState(st), nil
}

// OAuthClient is a scripted ports.OAuthClient: Discover answers
// Metadata (or DiscoverErr), Register RegisteredID and RegisteredSecret
// (or RegisterErr), ExchangeCode Tokens (or ExchangeErr). It records the
// calls. Safe for concurrent use.
type OAuthClient struct {
	mu               sync.Mutex
	Metadata         ports.OAuthMetadata
	DiscoverErr      error
	RegisteredID     string
	RegisteredSecret string
	RegisterErr      error
	Tokens           ports.OAuthTokens
	ExchangeErr      error
	// WhileExchanging runs inside ExchangeCode (without the lock): what
	// happens elsewhere while the token request is on its way.
	WhileExchanging func()

	Discovered []server.URL
	Issuers    []string // the issuer each Discover asked for
	Registered []string // the redirect URIs registered
	Exchanges  []ports.OAuthCodeExchange
}

// Discover answers Metadata whatever issuer asks for (it records it in
// Issuers): the application's own issuer check is what a test sees.
func (f *OAuthClient) Discover(_ context.Context, u server.URL, issuer string) (ports.OAuthMetadata, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Discovered = append(f.Discovered, u)
	f.Issuers = append(f.Issuers, issuer)
	if f.DiscoverErr != nil {
		return ports.OAuthMetadata{}, f.DiscoverErr
	}
	md := f.Metadata
	md.ScopesSupported = slices.Clone(md.ScopesSupported)
	md.CodeChallengeMethods = slices.Clone(md.CodeChallengeMethods)
	return md, nil
}

func (f *OAuthClient) Register(_ context.Context, _ ports.OAuthMetadata, redirectURI string, _ []string) (string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Registered = append(f.Registered, redirectURI)
	if f.RegisterErr != nil {
		return "", "", f.RegisterErr
	}
	return f.RegisteredID, f.RegisteredSecret, nil
}

func (f *OAuthClient) ExchangeCode(_ context.Context, req ports.OAuthCodeExchange) (ports.OAuthTokens, error) {
	if f.WhileExchanging != nil {
		f.WhileExchanging()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Exchanges = append(f.Exchanges, req)
	if f.ExchangeErr != nil {
		return ports.OAuthTokens{}, f.ExchangeErr
	}
	return f.Tokens, nil
}

var _ ports.OAuthClient = (*OAuthClient)(nil)
