package registry

import "github.com/google/wire"

// ProviderSet builds every use case of the module: servers, discovery,
// the allowlist and its calls.
var ProviderSet = wire.NewSet(
	wire.Struct(new(ServerDeps), "*"),
	NewCreateServerHandler, NewGetServerHandler, NewListServersHandler,
	NewPatchServerHandler, NewDeleteServerHandler,
	DiscoverySet,
	NewDiscoverServerHandler, NewSaveToolsHandler, NewListCallsHandler,
	NewApproveToolHandler, NewRemoveToolHandler, NewTestConnectionHandler,
	wire.Struct(new(ConnectDeps), "*"),
	NewStartConnectHandler, NewFinishConnectHandler, NewFindIssuerHandler,
)

// DiscoverySet builds what every live listing shares: [DiscoveryDeps]
// and the poisoning findings.
var DiscoverySet = wire.NewSet(wire.Struct(new(DiscoveryDeps), "*"), NewFindings)

// RecheckSet builds the recheck between reviews the worker runs; its
// [DiscoveryDeps] come from [DiscoverySet].
var RecheckSet = wire.NewSet(NewRecheckJob)
