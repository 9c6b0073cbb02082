package httpapi

import "github.com/google/wire"

// ProviderSet provides the API [*Server] with every route group of the
// API, from the application modules' use cases; the injector supplies
// the [Addr], the [Authenticator], the logger, the readiness check, the
// gates, the [MetricsHandler], the [HTTPMetrics], the [UIHandler] and
// [OAuthPublic]. A new route group is a constructor here and a parameter
// of [NewRoutes].
var ProviderSet = wire.NewSet(
	NewServerRoutes, NewStatusRoutes, NewRepositoryRoutes, NewPolicyRoutes,
	NewAuditRoutes, NewDiscoveryRoutes, NewReviewRoutes, NewMetricsRoutes,
	NewSettingsRoutes, NewUIRoutes, NewToolApprovalRoutes, NewTokenRoutes, NewOAuthPublicRoutes, NewRoutes, NewServer,
)

// NewRoutes is every route group the API serves.
func NewRoutes(s *ServerRoutes, st *StatusRoutes, r *RepositoryRoutes,
	p *PolicyRoutes, a *AuditRoutes, d *DiscoveryRoutes,
	rv *ReviewRoutes, m *MetricsRoutes, ts *SettingsRoutes, ui *UIRoutes, ta *ToolApprovalRoutes, tk *TokenRoutes,
	op *OAuthPublicRoutes) []Routes {
	return []Routes{s, st, r, p, a, d, rv, m, ts, ui, ta, tk, op}
}
