package registry

import "example.com/bad/app"

// Handler is a use case of the module; importing the shared root is allowed.
type Handler struct{}

var _ = app.Z
