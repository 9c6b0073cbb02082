package registry

import "github.com/google/wire"

// ProviderSet builds every use case of the module: servers, discovery,
// the allowlist and its calls.
var ProviderSet = wire.NewSet(
	wire.Struct(new(ServerDeps), "*"),
	NewCreateServerHandler, NewGetServerHandler, NewListServersHandler,
	NewPatchServerHandler, NewDeleteServerHandler,
	wire.Struct(new(DiscoveryDeps), "*"),
	NewDiscoverServerHandler, NewSaveToolsHandler, NewListCallsHandler,
	NewApproveToolHandler, NewRemoveToolHandler, NewTestConnectionHandler, NewFindings,
	wire.Struct(new(ConnectDeps), "*"),
	NewStartConnectHandler, NewFinishConnectHandler, NewFindIssuerHandler,
)
