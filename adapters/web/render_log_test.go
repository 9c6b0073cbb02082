package web

import (
	"bytes"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/xid"
	"github.com/rs/zerolog"
	"github.com/rs/zerolog/hlog"
)

// TestLogsCarryTheRequestID: a failure the UI logs names the request id
// httpapi's request log gave the request, and nothing when there is none.
func TestLogsCarryTheRequestID(t *testing.T) {
	var buf bytes.Buffer
	u := &UI{log: zerolog.New(&buf)}
	id := xid.New()
	r := httptest.NewRequest("GET", "/ui/", nil)
	u.logFor(r.WithContext(hlog.CtxWithID(r.Context(), id))).Error().Msg("with id")
	u.logFor(r).Error().Msg("without id")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"request_id":"`+id.String()+`"`) || strings.Contains(lines[1], "request_id") {
		t.Errorf("log lines = %q, want the id on the first only", lines)
	}
}
