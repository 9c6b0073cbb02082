package portfake

import (
	"context"
	"errors"
	"fmt"

	uid "github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports"
)

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
