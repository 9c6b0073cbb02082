package ports

// RulesAccount is the aggregate written a second time, as a plain record.
type RulesAccount struct{ Name string }
