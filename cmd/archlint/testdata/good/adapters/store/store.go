package store

import "example.com/good/ports"

// Store implements a port.
type Store struct{}

var _ ports.Store = Store{}
