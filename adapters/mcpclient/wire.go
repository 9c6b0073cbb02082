package mcpclient

import (
	"github.com/google/wire"

	"github.com/codelotse/codelotse/ports"
)

// ProviderSet provides a [*Connector] as [ports.MCPConnector]; the
// injector supplies [Options] (rules from the configuration, the logger).
var ProviderSet = wire.NewSet(
	NewConnector,
	wire.Bind(new(ports.MCPConnector), new(*Connector)),
)

// OAuthProviderSet provides an [*OAuthClient] as [ports.OAuthClient]
// (the code flow's discovery, registration and exchange), from the same
// [Options] as the connector.
var OAuthProviderSet = wire.NewSet(
	NewOAuthClient,
	wire.Bind(new(ports.OAuthClient), new(*OAuthClient)),
)
