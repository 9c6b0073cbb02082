package oauthpeer

// Start would start a test authorization server.
func Start() {}
