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
// adapters only. Like server.UnmarshalServerFromDatabase, it checks again
// what the service relies on whenever it reads the row, not every rule
// of [New]: the name rule ([ParseName]) came after the table, and a name
// stored before it must still load, or one such row would fail the whole
// repository list. What is checked, a row that breaks it being corrupt
// and an error, never a repository with a guessed value:
//
//   - the id, a canonical UUID: every route and page addresses the
//     repository by it;
//   - the visibility, one of the known values: it decides whether MCP
//     context may run (MC6);
//   - the name, what it takes to show it safely ([checkStoredName]):
//     valid UTF-8, 1 to [MaxNameLen] characters, no control character
//     (NUL included) and no bidirectional control.
//
// Not checked: the newer look-alike parts of [ParseName] (NFC, white
// space at the ends, format and compatibility characters, mixed
// scripts). They keep look-alikes out of names created now; an older
// name loads as stored, unnormalised, and its row's name is unchanged
// (the name never changes, so it is never written again).
func UnmarshalRepositoryFromDatabase(id, name, visibility string) (*Repository, error) {
	var errs []error
	if !uid.Valid(id) {
		errs = append(errs, &field.Error{Field: "id", Reason: "stored id is not a UUID"})
	}
	if err := checkStoredName(name); err != nil {
		errs = append(errs, err)
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

// Name is the repository's name: normalised (NFC) when it was created
// through [New], as stored when it is older than [ParseName].
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
