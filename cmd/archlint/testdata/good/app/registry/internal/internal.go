package internal

// Helper belongs to the registry module.
type Helper struct{}
