package postgres

// WithBeginQuery exposes withBeginQuery to the external tests.
var WithBeginQuery = withBeginQuery

// Unavailable exposes unavailable to the external tests.
var Unavailable = unavailable
