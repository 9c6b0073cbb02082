package httpapi

import (
	"net/http"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/ports"
)

// RepositoryRoutes serves /v1/repositories: create, read and change the
// visibility (tenant:manage), and the list (tenant:manage or repo:manage).
type RepositoryRoutes struct {
	create *repositories.CreateRepositoryHandler
	get    *repositories.GetRepositoryHandler
	update *repositories.UpdateRepositoryHandler
	list   *repositories.ListRepositoriesHandler
}

// NewRepositoryRoutes returns the repository route group.
func NewRepositoryRoutes(create *repositories.CreateRepositoryHandler, get *repositories.GetRepositoryHandler,
	update *repositories.UpdateRepositoryHandler, list *repositories.ListRepositoriesHandler) *RepositoryRoutes {
	return &RepositoryRoutes{create: create, get: get, update: update, list: list}
}

type repositoryListItemJSON struct {
	repositoryJSON
	McpActive bool `json:"mcpActive"`
}

type repositoryListJSON struct {
	Repositories []repositoryListItemJSON `json:"repositories"`
}

type repositoryJSON struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Visibility string `json:"visibility"`
}

func toRepositoryJSON(r *repository.Repository) repositoryJSON {
	return repositoryJSON{ID: r.ID(), Name: r.Name(), Visibility: r.Visibility().String()}
}

type createRepositoryRequest struct {
	Name       string `json:"name" validate:"required,max=200"`
	Visibility string `json:"visibility" validate:"required,oneof=private internal public"`
}

type updateRepositoryRequest struct {
	Visibility *string `json:"visibility" validate:"omitnil,oneof=private internal public"`
}

func (g *RepositoryRoutes) register(rt *router) {
	rt.handleAny("GET /v1/repositories", []string{app.PermTenantManage, app.PermRepoManage}, func(r *http.Request, p ports.Principal) (int, any, error) {
		limit, err := queryLimit(r, repositories.DefaultRepositoryPage, repositories.MaxRepositoryPage)
		if err != nil {
			return 0, nil, err
		}
		items, err := g.list.Handle(r.Context(), p, repositories.ListRepositories{Limit: limit, After: r.URL.Query().Get("after")})
		if err != nil {
			return 0, nil, err
		}
		out := repositoryListJSON{Repositories: make([]repositoryListItemJSON, 0, len(items))}
		for _, it := range items {
			out.Repositories = append(out.Repositories, repositoryListItemJSON{toRepositoryJSON(it.Repository), it.McpActive})
		}
		return http.StatusOK, out, nil
	})
	rt.handle("POST /v1/repositories", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		var req createRepositoryRequest
		if err := rt.decode(r, &req, 0); err != nil {
			return 0, nil, err
		}
		repo, err := g.create.Handle(r.Context(), p, repositories.CreateRepository{Name: req.Name, Visibility: req.Visibility})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusCreated, toRepositoryJSON(repo), nil
	})
	rt.handle("GET /v1/repositories/{id}", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		repo, err := g.get.Handle(r.Context(), p, repositories.GetRepository{ID: r.PathValue("id")})
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, toRepositoryJSON(repo), nil
	})
	rt.handle("PATCH /v1/repositories/{id}", app.PermTenantManage, func(r *http.Request, p ports.Principal) (int, any, error) {
		var req updateRepositoryRequest
		if err := rt.decode(r, &req, 0); err != nil {
			return 0, nil, err
		}
		var (
			repo *repository.Repository
			err  error
		)
		if req.Visibility == nil {
			// Nothing to change: answer the repository as it is.
			repo, err = g.get.Handle(r.Context(), p, repositories.GetRepository{ID: r.PathValue("id")})
		} else {
			repo, err = g.update.Handle(r.Context(), p, repositories.UpdateRepository{ID: r.PathValue("id"), Visibility: *req.Visibility})
		}
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, toRepositoryJSON(repo), nil
	})
}
