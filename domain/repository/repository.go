// Package repository holds a tenant's code repository: its id, its name
// (the look-alike rule of [ParseName]) and its visibility on the code
// host, which the gate reads before any MCP context (MC6).
package repository

import (
	"errors"

	"github.com/codelotse/codelotse/domain/field"
	uid "github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/domain/policy"
)

// The fields this package names in a [field.Error]: "id", "name" and
// "visibility".

// Repository is a code repository of a tenant. Its name never changes;
// its visibility does ([Repository.ChangeVisibility]). The zero value is
// invalid: use [New] or [UnmarshalRepositoryFromDatabase].
type Repository struct {
	id         string
	name       string
	visibility policy.Visibility
}

// New builds a repository. id is a UUID in canonical lowercase form,
// chosen by the caller; name is stored as [ParseName] returns it (NFC);
// visibility comes from [policy.ParseVisibility] (the zero Visibility is
// refused). Every bad field gives its own *[field.Error]; several are
// combined with [errors.Join].
func New(id, name string, visibility policy.Visibility) (*Repository, error) {
	var errs []error
	if !uid.Valid(id) {
		errs = append(errs, &field.Error{Field: "id", Reason: "must be a UUID"})
	}
	n, err := ParseName(name)
	if err != nil {
		errs = append(errs, err)
	}
	if visibility.IsZero() {
		errs = append(errs, visibilityError())
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Repository{id: id, name: n, visibility: visibility}, nil
}

// UnmarshalRepositoryFromDatabase rebuilds a stored repository, for
// adapters only. Unlike server.UnmarshalServerFromDatabase it holds the
// row to every rule of [New]: the id must be a canonical UUID, the
// visibility one of the known values, and the name must pass [ParseName]
// unchanged (a stored name is the normalised one, so a name that is not
// its own NFC form was not written through [New]). A row that breaks one
// is corrupt and an error, never a repository with a guessed value: the
// visibility decides whether MCP context may run, and the name is shown
// in the admin pages, where a control or bidi character would mislead.
func UnmarshalRepositoryFromDatabase(id, name, visibility string) (*Repository, error) {
	var errs []error
	if !uid.Valid(id) {
		errs = append(errs, &field.Error{Field: "id", Reason: "stored id is not a UUID"})
	}
	if n, err := ParseName(name); err != nil {
		errs = append(errs, err)
	} else if n != name {
		errs = append(errs, &field.Error{Field: "name", Reason: "stored name is not normalised (NFC)"})
	}
	v, err := policy.ParseVisibility(visibility)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Repository{id: id, name: name, visibility: v}, nil
}

// ID is the repository's UUID.
func (r *Repository) ID() string { return r.id }

// Name is the repository's name, normalised (NFC).
func (r *Repository) Name() string { return r.name }

// Visibility is the repository's visibility on its code host.
func (r *Repository) Visibility() policy.Visibility { return r.visibility }

// ChangeVisibility sets the visibility. The zero Visibility is refused
// and leaves r as it was. A repository that turns public keeps its
// stored policy; the gate stops MCP context for it from its next review.
func (r *Repository) ChangeVisibility(v policy.Visibility) error {
	if v.IsZero() {
		return visibilityError()
	}
	r.visibility = v
	return nil
}

func visibilityError() error {
	return &field.Error{Field: "visibility", Reason: "must be private, internal or public"}
}
