package repositories_test

import (
	"context"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/domain/policy"
)

func TestCreateRepository(t *testing.T) {
	ctx := context.Background()
	e := newRestEnv(t)
	d := e.deps(openGates)
	r, err := repositories.NewCreateRepositoryHandler(d).Handle(ctx, e.p, repositories.CreateRepository{Name: "acme/web", Visibility: "internal"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Name() != "acme/web" || r.Visibility() != policy.VisibilityInternal || len(r.ID()) != 36 {
		t.Errorf("Create = %+v", r)
	}
	got, err := repositories.NewGetRepositoryHandler(d).Handle(ctx, e.p, repositories.GetRepository{ID: strings.ToUpper(r.ID())})
	if err != nil || *got != *r {
		t.Errorf("Get = %+v, %v; want %+v", got, err, r)
	}
	if _, err := repositories.NewGetRepositoryHandler(d).Handle(ctx, e.other, repositories.GetRepository{ID: r.ID()}); restCode(err) != app.CodeNotFound {
		t.Errorf("Get by another tenant = %v, want not_found", err)
	}
	events := e.audit(tenantA)
	if len(events) != 1 || events[0].Action != "repository.create" || events[0].Target != r.ID() || events[0].Actor != "token:tok-1" {
		t.Errorf("audit = %+v", events)
	}

	_, err = repositories.NewCreateRepositoryHandler(d).Handle(ctx, e.p, repositories.CreateRepository{Name: "acme/web", Visibility: "private"})
	if restCode(err) != app.CodeNameTaken {
		t.Errorf("duplicate name = %v, want name_taken", err)
	}
	// Another tenant may use the same name.
	if _, err := repositories.NewCreateRepositoryHandler(d).Handle(ctx, e.other, repositories.CreateRepository{Name: "acme/web", Visibility: "private"}); err != nil {
		t.Errorf("same name in another tenant = %v", err)
	}
}

func TestCreateRepositoryFields(t *testing.T) {
	tests := []struct {
		name, repo, visibility, field string
	}{
		{"empty name", "", "private", "name"},
		{"long name", strings.Repeat("a", 201), "private", "name"},
		{"control char", "acme/\x1bapi", "private", "name"},
		{"NUL", "acme/\x00api", "private", "name"},
		{"trailing space", "acme/api ", "private", "name"},
		{"full-width", "\uff41\uff43\uff4d\uff45/api", "private", "name"},
		{"mixed scripts", "acme/\u0430pi", "private", "name"},
		{"no visibility", "acme/x", "", "visibility"},
		{"bad visibility", "acme/x", "Public", "visibility"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newRestEnv(t)
			_, err := repositories.NewCreateRepositoryHandler(e.deps(openGates)).Handle(context.Background(), e.p, repositories.CreateRepository{Name: tt.repo, Visibility: tt.visibility})
			if restCode(err) != app.CodeValidationFailed {
				t.Fatalf("Create = %v, want validation_failed", err)
			}
			if _, ok := app.AsError(err).Fields[tt.field]; !ok {
				t.Errorf("fields = %v, want %s", app.AsError(err).Fields, tt.field)
			}
		})
	}
}

// TestCreateRepositoryReportsEveryField: a bad name and a bad visibility
// are both reported, with the domain's reasons, and nothing is stored.
func TestCreateRepositoryReportsEveryField(t *testing.T) {
	e := newRestEnv(t)
	_, err := repositories.NewCreateRepositoryHandler(e.deps(openGates)).Handle(context.Background(), e.p, repositories.CreateRepository{Name: "acme/\x00api", Visibility: "secret"})
	fields := app.AsError(err).Fields
	if restCode(err) != app.CodeValidationFailed || len(fields) != 2 ||
		fields["name"] != "must contain printable characters only (not U+0000)" || fields["visibility"] != "must be private, internal or public" {
		t.Fatalf("Create = %v, fields %v; want name and visibility", err, fields)
	}
	if len(e.repos[tenantA].ByID) != 3 || len(e.audit(tenantA)) != 0 {
		t.Errorf("a refused create stored something: %d repositories, %d events", len(e.repos[tenantA].ByID), len(e.audit(tenantA)))
	}
}

// TestCreateRepositoryWithAMalformedNewIDIsNotTheCallersFault: an id
// source that gives something other than a UUID is an internal error, not
// validation_failed, and nothing is stored.
func TestCreateRepositoryWithAMalformedNewIDIsNotTheCallersFault(t *testing.T) {
	e := newRestEnv(t)
	d := e.deps(openGates)
	d.NewID = func() string { return "not-a-uuid" }
	r, err := repositories.NewCreateRepositoryHandler(d).Handle(context.Background(), e.p, repositories.CreateRepository{Name: "acme/web", Visibility: "private"})
	if r != nil || err == nil || restCode(err) != app.CodeInternal {
		t.Fatalf("Create = %v, %v; want an internal error", r, err)
	}
	if len(e.repos[tenantA].ByID) != 3 || len(e.audit(tenantA)) != 0 {
		t.Errorf("a refused create stored something: %d repositories, %d events", len(e.repos[tenantA].ByID), len(e.audit(tenantA)))
	}
}

func TestUpdateRepository(t *testing.T) {
	ctx := context.Background()
	e := newRestEnv(t)
	d := e.deps(openGates)
	r, err := repositories.NewUpdateRepositoryHandler(d).Handle(ctx, e.p, repositories.UpdateRepository{ID: repoPrivate, Visibility: "public"})
	if err != nil || r.Visibility() != policy.VisibilityPublic || r.Name() != "acme/api" {
		t.Fatalf("Update = %+v, %v", r, err)
	}
	events := e.audit(tenantA)
	if len(events) != 1 || events[0].Action != "repository.update" || events[0].Details["visibility"] != "public" || events[0].Details["previousVisibility"] != "private" {
		t.Errorf("audit = %+v", events)
	}
	if _, err := repositories.NewUpdateRepositoryHandler(d).Handle(ctx, e.other, repositories.UpdateRepository{ID: repoPrivate, Visibility: "private"}); restCode(err) != app.CodeNotFound {
		t.Errorf("Update by another tenant = %v, want not_found", err)
	}
	if _, err := repositories.NewUpdateRepositoryHandler(d).Handle(ctx, e.p, repositories.UpdateRepository{ID: "nope", Visibility: "private"}); restCode(err) != app.CodeNotFound {
		t.Errorf("Update of a malformed id = %v, want not_found", err)
	}
	if _, err := repositories.NewUpdateRepositoryHandler(d).Handle(ctx, e.p, repositories.UpdateRepository{ID: repoPrivate, Visibility: "secret"}); restCode(err) != app.CodeValidationFailed {
		t.Errorf("Update to a bad visibility = %v, want validation_failed", err)
	}
}

// TestCreateRepositoryStoresTheNFCName: the stored name is normalised, so
// the same name typed with a combining accent is name_taken.
func TestCreateRepositoryStoresTheNFCName(t *testing.T) {
	ctx := context.Background()
	e := newRestEnv(t)
	h := repositories.NewCreateRepositoryHandler(e.deps(openGates))
	r, err := h.Handle(ctx, e.p, repositories.CreateRepository{Name: "acme/cafe\u0301", Visibility: "private"})
	if err != nil || r.Name() != "acme/caf\u00e9" {
		t.Fatalf("Create = %+v, %v; want the name stored as NFC", r, err)
	}
	if events := e.audit(tenantA); len(events) != 1 || events[0].Details["name"] != "acme/caf\u00e9" {
		t.Errorf("audit = %+v, want the NFC name", events)
	}
	if _, err := h.Handle(ctx, e.p, repositories.CreateRepository{Name: "acme/caf\u00e9", Visibility: "private"}); restCode(err) != app.CodeNameTaken {
		t.Errorf("the precomposed spelling = %v, want name_taken", err)
	}
}
