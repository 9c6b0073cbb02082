package ports

import "example.com/good/domain/rules"

// Store is what the app needs.
type Store interface{}

var _ = rules.Deadline
