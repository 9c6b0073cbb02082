package registry

import "example.com/good/app/registry/internal"

// Handler uses a package of its own module.
type Handler struct{ H internal.Helper }
