package portfake

import (
	"context"
	"errors"

	"github.com/codelotse/codelotse/domain/settings"
)

// Settings holds one tenant's settings.
type Settings struct{ Value settings.Settings }

func (f *Settings) Get(context.Context) (settings.Settings, error) { return f.Value, nil }

// GetForUpdate is Get: Tenants serialises the fake's transactions.
func (f *Settings) GetForUpdate(ctx context.Context) (settings.Settings, error) { return f.Get(ctx) }

func (f *Settings) Put(_ context.Context, s settings.Settings) error {
	if s.IsZero() {
		return errors.New("fake: put zero settings")
	}
	f.Value = s
	return nil
}
