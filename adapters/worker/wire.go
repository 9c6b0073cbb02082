package worker

import "github.com/google/wire"

// ProviderSet provides a [*Worker] from a *pgxpool.Pool (the pool the
// postgres adapter shares), a [ReviewHandler], a zerolog.Logger and
// [Options]; the injector supplies those, binding [Retention] to the
// database in Options.
var ProviderSet = wire.NewSet(New)
