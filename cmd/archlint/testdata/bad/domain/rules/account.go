package rules

// Account is an aggregate: the domain loads it through its constructor.
type Account struct{ name string }

// UnmarshalAccountFromDatabase rebuilds a stored account.
func UnmarshalAccountFromDatabase(name string) (*Account, error) { return &Account{name: name}, nil }
