package postgres

// WithBeginQuery exposes withBeginQuery to the external tests.
var WithBeginQuery = withBeginQuery
