package review

import (
	"example.com/good/app"
	"example.com/good/ports"
)

// Run is a use case of the module: it uses the shared root and the ports.
type Run struct {
	U app.UseCase
	S ports.Store
}
