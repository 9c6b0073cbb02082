package ports

import "example.com/good/domain/rules"

// AccountRepo stores accounts: the port speaks the domain's type.
type AccountRepo interface {
	Get(id string) (*rules.Account, error)
}
