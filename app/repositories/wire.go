package repositories

import "github.com/google/wire"

// ProviderSet builds every use case of the module: repositories, their
// policies and the tenant default.
var ProviderSet = wire.NewSet(NewRepositoryHandler, NewRepositoryLister, NewPolicyHandler, NewDefaultsHandler)
