// Package storetest is a test helper of the store adapter: a sub-package
// of an adapter may import it.
package storetest

import "example.com/good/adapters/store"

var S store.Store
