package portfake

import (
	"context"
	"errors"

	"github.com/codelotse/codelotse/domain/settings"
)

// StoredSettings holds one tenant's settings.
type StoredSettings struct{ Value settings.Settings }

func (f *StoredSettings) Get(context.Context) (settings.Settings, error) { return f.Value, nil }

// GetForUpdate is Get: Tenants serialises the fake's transactions.
func (f *StoredSettings) GetForUpdate(ctx context.Context) (settings.Settings, error) {
	return f.Get(ctx)
}

func (f *StoredSettings) Put(_ context.Context, s settings.Settings) error {
	if s.IsZero() {
		return errors.New("fake: put zero settings")
	}
	f.Value = s
	return nil
}
