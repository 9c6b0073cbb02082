package repositories

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/ports"
)

// Bounds of GET /v1/repositories?limit=N.
const (
	DefaultRepositoryPage = 50
	MaxRepositoryPage     = 200
)

// ListRepositories is the query of GET /v1/repositories: a page of at
// most Limit repositories whose names sort after After.
type ListRepositories struct {
	Limit int
	After string
}

// RepositoryListItem is a repository with the gate's answer for it.
type RepositoryListItem struct {
	*repository.Repository
	McpActive bool
}

// ListRepositoriesHandler lists the tenant's repositories (tenant:manage
// or repo:manage). Safe for concurrent use.
type ListRepositoriesHandler struct{ d Deps }

// NewListRepositoriesHandler returns a [ListRepositoriesHandler].
func NewListRepositoriesHandler(d Deps) *ListRepositoriesHandler {
	return &ListRepositoriesHandler{d: d}
}

// Handle returns one page by name with mcpActive, the answer GET …/policy
// gives for each: signed off, instance allowed, effective mode on, at
// least one existing server, not public. validation_failed (limit,
// after) for a limit outside 1–[MaxRepositoryPage] or an after longer
// than a name can be, not UTF-8 or holding a NUL byte.
func (h *ListRepositoriesHandler) Handle(ctx context.Context, p ports.Principal, q ListRepositories) ([]RepositoryListItem, error) {
	fields := map[string]string{}
	if q.Limit < 1 || q.Limit > MaxRepositoryPage {
		fields["limit"] = fmt.Sprintf("must be an integer between 1 and %d", MaxRepositoryPage)
	}
	switch {
	case len([]rune(q.After)) > MaxRepositoryNameLen:
		fields["after"] = fmt.Sprintf("must be at most %d characters", MaxRepositoryNameLen)
	case !utf8.ValidString(q.After) || strings.ContainsRune(q.After, 0):
		// No stored name has either, and PostgreSQL compares neither.
		fields["after"] = "must be valid UTF-8 without NUL bytes"
	}
	if len(fields) > 0 {
		return nil, app.Invalid(fields)
	}
	var out []RepositoryListItem
	err := h.d.Tenants.ReadInTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		repos, err := tx.Repositories().List(ctx, q.After, q.Limit)
		if err != nil {
			return fmt.Errorf("list repositories: %w", err)
		}
		out = make([]RepositoryListItem, len(repos))
		for i, r := range repos {
			out[i].Repository = r
		}
		if !h.d.Gates.SignedOff || !h.d.Gates.Instance.Allowed() || len(repos) == 0 {
			return nil // closed gates: no repository uses MCP, nothing to read
		}
		return h.markActive(ctx, tx, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// markActive merges each repository's section with the tenant default,
// with two queries for the whole page: the policies (the default's and
// the page's) and the existence of the servers they name.
func (h *ListRepositoriesHandler) markActive(ctx context.Context, tx ports.TenantTx, items []RepositoryListItem) error {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID()
	}
	def, stored, err := tx.Policies().Repositories(ctx, ids)
	if err != nil {
		return fmt.Errorf("read policies: %w", err)
	}
	effs := make([]policy.Effective, len(items))
	var servers []string
	seen := map[string]bool{}
	for i, it := range items {
		s, ok := stored[it.ID()]
		if !ok {
			s = app.InheritSection()
		}
		effs[i] = policy.Merge(def, s)
		for _, id := range effs[i].Servers() {
			if !seen[id] {
				seen[id] = true
				servers = append(servers, id)
			}
		}
	}
	exists, err := tx.Policies().ServersExist(ctx, servers)
	if err != nil {
		return fmt.Errorf("check policy servers: %w", err)
	}
	for i := range items {
		items[i].McpActive = gate.EffectiveMcpContext(effs[i].Existing(exists), items[i].Visibility(), h.d.Gates.SignedOff, h.d.Gates.Instance.Allowed())
	}
	return nil
}
