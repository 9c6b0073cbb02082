//go:build wireinject

package main

import (
	"context"

	"github.com/codelotse/codelotse/adapters/config"
	"github.com/codelotse/codelotse/adapters/httpapi"
	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/app/operations"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/google/wire"
	"github.com/rs/zerolog"
)

// apiSet is the REST API.
var apiSet = wire.NewSet(
	appSet,
	uiSet,
	oauthSet,
	provideHTTPAddr,
	httpapi.ProviderSet,
	wire.Bind(new(httpapi.Authenticator), new(*accounts.AuthenticateHandler)),
)

// initServe builds `codelotse serve`: the API and the worker in one process.
func initServe(ctx context.Context, cfg config.Config, log zerolog.Logger) (*service, func(), error) {
	wire.Build(databaseSet, baseSet, cipherSet, connectorSet, metricsSet, apiSet, reviewSet, wire.Struct(new(service), "*"))
	return nil, nil, nil
}

// initAPI builds `codelotse api`.
func initAPI(ctx context.Context, cfg config.Config, log zerolog.Logger) (*httpapi.Server, func(), error) {
	wire.Build(databaseSet, baseSet, cipherSet, connectorSet, metricsSet, apiSet)
	return nil, nil, nil
}

// initWorker builds `codelotse worker`: the worker and its probe server.
func initWorker(ctx context.Context, cfg config.Config, log zerolog.Logger) (*service, func(), error) {
	wire.Build(databaseSet, baseSet, cipherSet, connectorSet, metricsSet, reviewSet, registry.DiscoverySet,
		provideHTTPAddr, httpapi.NewMetricsRoutes, provideProbeServer, wire.Struct(new(service), "*"))
	return nil, nil, nil
}

func initMigrator(ctx context.Context, cfg config.Config) (*postgres.DB, func(), error) {
	wire.Build(provideMigrationDB)
	return nil, nil, nil
}

func initAccountAdmin(ctx context.Context, cfg config.Config) (*accountCommands, func(), error) {
	wire.Build(databaseSet, provideRand, provideClock, wire.Struct(new(accounts.Deps), "Accounts", "Tenants", "Clock", "Rand"),
		accounts.NewCreateTenantHandler, accounts.NewCreateTokenHandler, accounts.NewListTokensHandler, accounts.NewRevokeTokenHandler,
		wire.Struct(new(accountCommands), "*"))
	return nil, nil, nil
}

func initRotateKeys(ctx context.Context, cfg config.Config) (*operations.RotateKeysHandler, func(), error) {
	wire.Build(databaseSet, cipherSet, operations.NewRotateKeysHandler)
	return nil, nil, nil
}
