package app

import "example.com/good/ports"

// UseCase depends on ports only.
type UseCase struct{ S ports.Store }
