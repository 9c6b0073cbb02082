package web

import "github.com/google/wire"

// ProviderSet provides the admin pages' [*UI] from the application
// modules' use cases (every field of [Deps]); the injector supplies the
// [PublicURL] and the logger.
var ProviderSet = wire.NewSet(wire.Struct(new(Deps), "*"), New)
