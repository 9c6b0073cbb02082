package portfake

import (
	"context"
	"maps"
	"slices"

	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/ports"
)

// Repositories is an in-memory ports.RepositoryRepo of one tenant. It
// keeps copies, so a caller's later changes to a repository do not reach
// the "stored" one.
type Repositories struct {
	ByID map[string]*repository.Repository
}

// NewRepositories returns a fake holding rs (copies).
func NewRepositories(rs ...*repository.Repository) *Repositories {
	f := &Repositories{ByID: make(map[string]*repository.Repository, len(rs))}
	for _, r := range rs {
		f.ByID[r.ID()] = cloneRepository(r)
	}
	return f
}

// MustRepository builds a repository for a test's seed, and panics when
// repository.New refuses it.
func MustRepository(id, name string, v policy.Visibility) *repository.Repository {
	r, err := repository.New(id, name, v)
	if err != nil {
		panic(err)
	}
	return r
}

func cloneRepository(r *repository.Repository) *repository.Repository { c := *r; return &c }

func (f *Repositories) Insert(_ context.Context, r *repository.Repository) error {
	if _, used := f.ByID[r.ID()]; used {
		return ports.ErrConflict
	}
	for _, have := range f.ByID {
		if have.Name() == r.Name() {
			return ports.ErrConflict
		}
	}
	f.ByID[r.ID()] = cloneRepository(r)
	return nil
}

func (f *Repositories) Get(_ context.Context, id string) (*repository.Repository, error) {
	r, ok := f.ByID[id]
	if !ok {
		return nil, ports.ErrNotFound
	}
	return cloneRepository(r), nil
}

func (f *Repositories) Update(_ context.Context, id string, fn func(r *repository.Repository) error) (*repository.Repository, error) {
	have, ok := f.ByID[id]
	if !ok {
		return nil, ports.ErrNotFound
	}
	r := cloneRepository(have)
	if err := fn(r); err != nil {
		return nil, err
	}
	f.ByID[id] = cloneRepository(r)
	return r, nil
}

func (f *Repositories) List(_ context.Context, after string, limit int) ([]*repository.Repository, error) {
	page := pageAfter(slices.Collect(maps.Values(f.ByID)), (*repository.Repository).Name, after, limit)
	out := make([]*repository.Repository, len(page))
	for i, r := range page {
		out[i] = cloneRepository(r)
	}
	return out, nil
}
