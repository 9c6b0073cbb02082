package repositories

import "github.com/google/wire"

// ProviderSet builds every use case of the module: repositories, their
// policies and the tenant default.
var ProviderSet = wire.NewSet(
	wire.Struct(new(Deps), "*"),
	NewCreateRepositoryHandler, NewGetRepositoryHandler, NewUpdateRepositoryHandler,
	NewListRepositoriesHandler, NewGetPolicyHandler, NewPutPolicyHandler, NewListPolicyServersHandler,
	NewGetDefaultsHandler, NewPutDefaultsHandler, NewRepositoriesUsingServerHandler,
)
