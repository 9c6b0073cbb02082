//go:build wireinject

package main

import (
	"context"

	"github.com/codelotse/codelotse/adapters/config"
	"github.com/codelotse/codelotse/adapters/httpapi"
	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/ports"
	"github.com/google/wire"
	"github.com/rs/zerolog"
)

func initServe(ctx context.Context, cfg config.Config, log zerolog.Logger) (*httpapi.Server, func(), error) {
	wire.Build(
		databaseSet,
		cipherSet,
		connectorSet,
		appSet,
		routesSet,
		wire.Bind(new(ports.Readiness), new(*postgres.DB)),
		provideHTTPAddr,
		httpapi.NewServer,
	)
	return nil, nil, nil
}

func initMigrator(ctx context.Context, cfg config.Config) (*postgres.DB, func(), error) {
	wire.Build(provideMigrationDB)
	return nil, nil, nil
}

func initAccountAdmin(ctx context.Context, cfg config.Config) (*app.AccountAdmin, func(), error) {
	wire.Build(databaseSet, app.NewAccountAdmin)
	return nil, nil, nil
}

func initRotateKeys(ctx context.Context, cfg config.Config) (*app.RotateKeysHandler, func(), error) {
	wire.Build(databaseSet, cipherSet, app.NewRotateKeysHandler)
	return nil, nil, nil
}
