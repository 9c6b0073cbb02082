package portfake

import (
	"context"
	"maps"
	"slices"

	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports"
)

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
