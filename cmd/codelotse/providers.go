package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/codelotse/codelotse/adapters/config"
	"github.com/codelotse/codelotse/adapters/crypto"
	"github.com/codelotse/codelotse/adapters/httpapi"
	"github.com/codelotse/codelotse/adapters/mcpclient"
	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/ports"
	"github.com/google/uuid"
	"github.com/google/wire"
	"github.com/rs/zerolog"
)

// databaseSet opens the database for the service: it refuses to start when
// the tenant role could bypass row-level security.
var databaseSet = wire.NewSet(provideServiceDB, postgres.ProviderSet)

func provideServiceDB(ctx context.Context, cfg config.Config) (*postgres.DB, func(), error) {
	db, cleanup, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, nil, err
	}
	if err := db.CheckTenantRole(ctx); err != nil {
		cleanup()
		return nil, nil, err
	}
	return db, cleanup, nil
}

// provideMigrationDB opens the database as the migrating role; the tenant
// role may not exist yet.
func provideMigrationDB(ctx context.Context, cfg config.Config) (*postgres.DB, func(), error) {
	return postgres.Open(ctx, cfg.DatabaseURL)
}

// cipherSet is the credential key ring from QUAVON_ENCRYPTION_KEYS.
var cipherSet = wire.NewSet(provideKeyRing, wire.Bind(new(ports.Cipher), new(*crypto.KeyRing)))

func provideKeyRing(cfg config.Config) (*crypto.KeyRing, error) {
	keys := make([]crypto.Key, len(cfg.Keys))
	for i, k := range cfg.Keys {
		keys[i] = crypto.Key{ID: k.ID, Secret: k.Secret}
	}
	return crypto.NewKeyRing(keys)
}

func provideGates(cfg config.Config) app.Gates { return app.NewGates(cfg.Instance, cfg.Edition) }

func provideRules(cfg config.Config) netpolicy.Rules {
	return netpolicy.NewRules(cfg.Edition, cfg.PrivateHosts)
}

func provideResolver() ports.Resolver { return net.DefaultResolver }

// systemClock is the wall clock at PostgreSQL's precision (microseconds),
// so a time answered after a write is the time every later read answers.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func provideClock() ports.Clock { return systemClock{} }

func provideNewID() func() string { return uuid.NewString }

func provideHTTPAddr(cfg config.Config) httpapi.Addr { return httpapi.Addr(cfg.HTTPAddr) }

// appSet builds every use case the API serves.
var appSet = wire.NewSet(
	provideGates, provideRules, provideResolver, provideClock, provideNewID,
	wire.Struct(new(app.ServerDeps), "*"),
	app.NewAuthenticator, wire.Bind(new(httpapi.Authenticator), new(*app.Authenticator)),
	app.NewCreateServerHandler, app.NewGetServerHandler, app.NewListServersHandler,
	app.NewPatchServerHandler, app.NewDeleteServerHandler,
	app.NewStatusHandler, app.NewRepositoryHandler, app.NewPolicyHandler,
	app.NewDefaultsHandler, app.NewAuditHandler,
	wire.Struct(new(app.DiscoveryDeps), "*"),
	app.NewDiscoverServerHandler, app.NewSaveToolsHandler, app.NewListCallsHandler,
)

// connectorSet is the guarded MCP transport.
var connectorSet = wire.NewSet(provideConnectorOptions, mcpclient.ProviderSet)

func provideConnectorOptions(cfg config.Config, rules netpolicy.Rules, resolver ports.Resolver, log zerolog.Logger) (mcpclient.Options, error) {
	roots, err := rootCAs()
	if err != nil {
		return mcpclient.Options{}, err
	}
	return mcpclient.Options{Rules: rules, Resolver: resolver, Timeout: cfg.CallTimeout, RootCAs: roots, Logger: log}, nil
}

// rootCAs is the system pool plus the CA file SSL_CERT_FILE names, so the
// variable adds to the system's trust rather than replacing it.
func rootCAs() (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if file := os.Getenv("SSL_CERT_FILE"); file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("SSL_CERT_FILE: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("SSL_CERT_FILE: no PEM certificate in the file")
		}
	}
	return pool, nil
}

// routesSet groups the API's routes.
var routesSet = wire.NewSet(
	httpapi.NewServerRoutes, httpapi.NewStatusRoutes, httpapi.NewRepositoryRoutes,
	httpapi.NewPolicyRoutes, httpapi.NewAuditRoutes, httpapi.NewDiscoveryRoutes, provideRoutes,
)

func provideRoutes(s *httpapi.ServerRoutes, st *httpapi.StatusRoutes, r *httpapi.RepositoryRoutes,
	p *httpapi.PolicyRoutes, a *httpapi.AuditRoutes, d *httpapi.DiscoveryRoutes) []httpapi.Routes {
	return []httpapi.Routes{s, st, r, p, a, d}
}
