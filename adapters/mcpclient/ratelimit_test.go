package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/tool/tooltest"
	"github.com/codelotse/codelotse/ports"
)

// TestRetryAfter: delay-seconds and HTTP dates are read as a wait from
// now, capped; anything else is no wait.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
	}{
		{"7", 7 * time.Second},
		{"0", 0},
		{"-3", 0},
		{"", 0},
		{"soon", 0},
		{"1.5", 0},
		{"99999999999", maxRetryAfter},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{now.Add(48 * time.Hour).Format(http.TimeFormat), maxRetryAfter},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.header, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

// TestA429IsRateLimited: a tools/call answered 429 fails with
// ErrRateLimited carrying the server's Retry-After, not as an unreachable
// server; a 503 stays unreachable.
func TestA429IsRateLimited(t *testing.T) {
	for _, tt := range []struct {
		status int
		want   error
	}{{http.StatusTooManyRequests, ports.ErrRateLimited}, {http.StatusServiceUnavailable, ports.ErrServerUnreachable}} {
		raw := newRawServer()
		raw.toolsCall = func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(tt.status)
		}
		ts := startServer(t, raw)
		c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
		s, err := c.OpenSession(context.Background(), ports.MCPTarget{URL: ts.url(t)}, limits.ReviewResponseCap)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.CallTool(context.Background(), "search", tooltest.Args(`{"query":"x"}`))
		s.Close()
		wantCode(t, err, tt.want)
		var rl *ports.RateLimited
		if got := errors.As(err, &rl); got != (tt.want == ports.ErrRateLimited) || got && rl.RetryAfter != 7*time.Second {
			t.Errorf("status %d: RateLimited in the chain %v (%+v)", tt.status, got, rl)
		}
	}
}
