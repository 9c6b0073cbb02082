package app

import "github.com/google/wire"

// ProviderSet builds the shared root's use case (the gates' status); the
// gates themselves come from the configuration in cmd/codelotse.
var ProviderSet = wire.NewSet(NewStatusHandler)
