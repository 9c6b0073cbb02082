package portfake

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/codelotse/codelotse/ports"
)

// PromptLogs keeps one tenant's prompt logs in memory.
// When Reviews is set, a log needs a run of the tenant (ErrNotFound). When
// Rotator is set, each log is also a row of the rotator, which may
// re-seal it.
type PromptLogs struct {
	Logs    []ports.PromptLog
	Reviews ports.ReviewRepo
	Rotator *PromptRotator
	ids     []string // the rotator's id of each of Logs
}

func (f *PromptLogs) Insert(ctx context.Context, l ports.PromptLog) error {
	if f.Reviews != nil {
		if _, err := f.Reviews.Get(ctx, l.ReviewID); err != nil {
			return fmt.Errorf("fake: prompt log: review: %w", err)
		}
	}
	f.Logs = append(f.Logs, l)
	if f.Rotator != nil {
		id := newUUID()
		f.ids = append(f.ids, id)
		f.Rotator.Logs = append(f.Rotator.Logs, ports.SealedPromptLog{ID: id, ReviewID: l.ReviewID, Sealed: bytes.Clone(l.Sealed)})
	}
	return nil
}

func (f *PromptLogs) List(_ context.Context, reviewID string, now time.Time) ([]ports.PromptLog, error) {
	var out []ports.PromptLog
	for i, l := range f.Logs {
		if l.ReviewID == reviewID && l.ExpiresAt.After(now) {
			if f.Rotator != nil && i < len(f.ids) {
				l.Sealed = f.Rotator.sealed(f.ids[i])
			}
			out = append(out, l)
		}
	}
	return out, nil
}

func (f *PromptLogs) DeleteAll(context.Context) (int64, error) {
	n := int64(len(f.Logs))
	if f.Rotator != nil {
		f.Rotator.Logs = slices.DeleteFunc(f.Rotator.Logs, func(l ports.SealedPromptLog) bool { return slices.Contains(f.ids, l.ID) })
	}
	f.Logs, f.ids = nil, nil
	return n, nil
}

// PromptRotator is an in-memory ports.PromptLogRotator.
type PromptRotator struct{ Logs []ports.SealedPromptLog }

func (f *PromptRotator) Batch(_ context.Context, after string, limit int) ([]ports.SealedPromptLog, error) {
	return pageAfter(f.Logs, func(l ports.SealedPromptLog) string { return l.ID }, after, limit), nil
}

func (f *PromptRotator) sealed(id string) []byte {
	for _, l := range f.Logs {
		if l.ID == id {
			return l.Sealed
		}
	}
	return nil
}

func (f *PromptRotator) Replace(_ context.Context, id string, old, sealed []byte) (bool, error) {
	for i, l := range f.Logs {
		if l.ID == id && old != nil && string(l.Sealed) == string(old) {
			f.Logs[i].Sealed = sealed
			return true, nil
		}
	}
	return false, nil
}

// logIDs numbers the prompt logs of every PromptLogs, so that their ids
// are unique across tenants and sort in the order they were written.
var logIDs atomic.Int64

func newUUID() string { return UUID(int(logIDs.Add(1))) }
