//go:build !signedoff

package main

import (
	"testing"

	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
)

// TestBrowserShowsTheNoticeUntilSignedOff: in the build that is not signed
// off, every page shows the sign-off notice and the MCP forms are disabled.
// It runs `codelotse api`, which serves the web interface like `serve`.
func TestBrowserShowsTheNoticeUntilSignedOff(t *testing.T) {
	ctx := newBrowser(t)
	in := startCommandOn(t, "api", pgtest.DSN(t), "QUAVON_MCP_CONTEXT=allowed")
	_, c := in.tenant("notice", "tenant:manage,repo:manage")
	checkNotice(t, ctx, in.base, c.token, "Awaiting security sign-off")
}
