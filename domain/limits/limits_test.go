package limits_test

import (
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/limits"
)

// TestThreatAnalysisLimits pins every number of the threat analysis by
// value, so a changed constant fails here and has to be argued for.
func TestThreatAnalysisLimits(t *testing.T) {
	sizes := []struct {
		name      string
		got, want int64
	}{
		{"MaxArgumentStringLen (characters per argument string)", limits.MaxArgumentStringLen, 500},
		{"ToolResultCap (bytes per tool result)", limits.ToolResultCap, 64 * 1024},
		{"CallReservation (bytes reserved per call)", limits.CallReservation, 64 * 1024},
		{"RunByteBudget (bytes per run)", limits.RunByteBudget, 256 * 1024},
		{"ReviewResponseCap (bytes per HTTP response during a review)", limits.ReviewResponseCap, 256 * 1024},
		{"DiscoveryResponseCap (bytes per HTTP response during discovery)", limits.DiscoveryResponseCap, 1024 * 1024},
		{"ResultPromptChars (characters per result in the prompt)", limits.ResultPromptChars, 8000},
		{"MaxCallsPerRun", limits.MaxCallsPerRun, 20},
		{"MinCallsPerRun", limits.MinCallsPerRun, 1},
		{"DefaultCallsPerRun", limits.DefaultCallsPerRun, 5},
		{"FinderMaxSteps", limits.FinderMaxSteps, 8},
		{"MaxServersPerTenant", limits.MaxServersPerTenant, 20},
		{"MaxPolicyServers (servers per repository)", limits.MaxPolicyServers, 5},
		{"MaxToolsPerServer (allowlisted tools)", limits.MaxToolsPerServer, 20},
		{"MaxListedTools (tools accepted from one listing)", limits.MaxListedTools, 200},
		{"MaxSchemaProperties", limits.MaxSchemaProperties, 20},
		{"MaxEnumValues", limits.MaxEnumValues, 50},
		{"MaxToolDescriptionLen", limits.MaxToolDescriptionLen, 500},
		{"MaxURLLen", limits.MaxURLLen, 2048},
		{"MaxCredentialLen", limits.MaxCredentialLen, 4096},
		{"CredentialHintChars", limits.CredentialHintChars, 4},
		{"MaxServerNameLen", limits.MaxServerNameLen, 24},
		{"RecentCalls", limits.RecentCalls, 50},
		{"MaxRequestBody", limits.MaxRequestBody, 64 * 1024},
		{"MaxReviewRequestBody", limits.MaxReviewRequestBody, 8 * 1024 * 1024},
		{"BoundaryBytes (128-bit boundaries)", limits.BoundaryBytes, 16},
		{"DefaultRetentionDays", limits.DefaultRetentionDays, 90},
		{"MaxConnectionTests (tests of unsaved servers per tenant and window)", limits.MaxConnectionTests, 6},
		{"MaxCallsPerMinute (a server's calls per window, and the instance's cap)", limits.MaxCallsPerMinute, 600},
	}
	for _, tt := range sizes {
		if tt.got != tt.want {
			t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
		}
	}
	durations := []struct {
		name      string
		got, want time.Duration
	}{
		{"CallTimeout (per HTTP request to an MCP server)", limits.CallTimeout, 10 * time.Second},
		{"DiscoveryInterval (between discoveries of one server)", limits.DiscoveryInterval, 10 * time.Second},
		{"ConnectionTestWindow (of MaxConnectionTests)", limits.ConnectionTestWindow, time.Minute},
		{"CallLimitWindow (of MaxCallsPerMinute)", limits.CallLimitWindow, time.Minute},
		{"FinderWallClock", limits.FinderWallClock, 240 * time.Second},
	}
	for _, tt := range durations {
		if tt.got != tt.want {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}
