//go:build !signedoff

package gate

// SignedOff is MCP_CONTEXT_SIGNED_OFF: whether the maintainer has signed off
// the threat analysis MC1–MC12 (docs/threat-model.md). It is false in the source; only the
// maintainer's sign-off flips it. Builds with the tag signedoff (for
// development, demos and tests) take the value from signedoff_true.go.
const SignedOff = false
