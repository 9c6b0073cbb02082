package postgres_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
)

// A transaction whose context carries a begin query starts with it; one
// whose begin query fails leaves no aborted transaction behind on the
// (only) connection.
func TestBeginQuery(t *testing.T) {
	ctx := t.Context()
	db := open(t, withPoolSize1(pgtest.DSN(t)))
	setting := func(ctx context.Context, tx bun.Tx) (string, error) {
		var v string
		err := tx.NewRaw("SELECT coalesce(current_setting('test.begin', true), '')").Scan(ctx, &v)
		return v, err
	}

	var got string
	err := db.Bun().RunInTx(postgres.WithBeginQuery(ctx, "BEGIN; SELECT set_config('test.begin', 'yes', true)"), nil,
		func(ctx context.Context, tx bun.Tx) (err error) {
			got, err = setting(ctx, tx)
			return err
		})
	if err != nil || got != "yes" {
		t.Fatalf("setting inside the transaction = %q, %v; want yes (the begin query ran)", got, err)
	}

	err = db.Bun().RunInTx(postgres.WithBeginQuery(ctx, "BEGIN; SELECT 1/0"), nil, func(context.Context, bun.Tx) error {
		t.Error("fn ran after a failed begin query")
		return nil
	})
	if err == nil {
		t.Fatal("a failing begin query began a transaction")
	}

	err = db.Bun().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) (err error) {
		got, err = setting(ctx, tx)
		return err
	})
	if err != nil || got != "" {
		t.Errorf("next transaction: setting = %q, %v; want a clean transaction", got, err)
	}
}

// bun's queries (every value written into the text) are not prepared:
// they would fill pgx's statement cache and the server's prepared
// statements with one entry per tenant and id.
func TestBunQueriesAreNotPrepared(t *testing.T) {
	ctx := t.Context()
	db := open(t, withPoolSize1(pgtest.DSN(t)))
	for i := range 3 {
		var v int
		if err := db.Bun().NewRaw("SELECT ?::int", i).Scan(ctx, &v); err != nil || v != i {
			t.Fatalf("SELECT %d = %d, %v", i, v, err)
		}
	}
	var n int
	if err := db.Bun().NewRaw("SELECT count(*) FROM pg_prepared_statements").Scan(ctx, &n); err != nil || n != 0 {
		t.Errorf("prepared statements on the connection = %d (err %v), want 0", n, err)
	}
}
