package main

import (
	"context"

	"github.com/codelotse/codelotse/adapters/config"
	"github.com/codelotse/codelotse/adapters/httpapi"
	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/google/wire"
)

// databaseSet opens the database for the service: it refuses to start when
// the tenant role could bypass row-level security.
var databaseSet = wire.NewSet(provideServiceDB)

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

func provideHTTPAddr(cfg config.Config) httpapi.Addr { return httpapi.Addr(cfg.HTTPAddr) }
