package store

// Account is the adapter's own row type: adapters may name their rows
// as they like, and load them through the domain's constructor.
type Account struct{ Name string }
