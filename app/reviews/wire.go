package reviews

import "github.com/google/wire"

// ProviderSet builds the review use cases the API serves: submit and
// read reviews, read prompt logs.
var ProviderSet = wire.NewSet(
	wire.Struct(new(Deps), "*"),
	NewSubmitReviewHandler, NewGetReviewHandler, NewListReviewsHandler,
	NewListReviewCallsHandler, NewListPromptsHandler,
)

// RunnerSet builds the review run the worker calls, from the ports in
// [ReviewDeps] (McpSetupTimeout stays zero: 30 s).
var RunnerSet = wire.NewSet(
	wire.Struct(new(ReviewDeps), "Tenants", "Cipher", "Connector", "Model", "Scanner", "Metrics", "Clock", "Gates", "Allowed", "CallCap", "Rand", "Warn"),
	NewReviewRunner,
)
