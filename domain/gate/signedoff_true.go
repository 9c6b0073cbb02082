//go:build signedoff

package gate

// SignedOff is MCP_CONTEXT_SIGNED_OFF. This file is compiled only with the
// build tag signedoff, for development, demos and tests; release builds use
// signedoff_false.go, which only the maintainer's sign-off changes.
const SignedOff = true
