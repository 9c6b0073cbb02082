package app

type (
	// Account copies the aggregate too.
	Account struct{ Name string }
)
