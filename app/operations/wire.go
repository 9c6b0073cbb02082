package operations

import "github.com/google/wire"

// ProviderSet builds the operator's jobs: key rotation and retention.
var ProviderSet = wire.NewSet(NewRotateKeysHandler, NewRetentionJob)
