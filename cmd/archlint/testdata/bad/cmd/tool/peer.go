package tool

import (
	"example.com/bad/adapters/mcpclient/oauthpeer"
)

// Peer links a test peer into a binary.
func Peer() { oauthpeer.Start() }
