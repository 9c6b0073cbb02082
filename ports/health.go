package ports

import "context"

// Readiness tells whether the service's dependencies answer. Ping is safe
// for concurrent use and returns within the context's deadline.
type Readiness interface {
	Ping(ctx context.Context) error
}
