package operations

import (
	"context"
	"errors"
	"fmt"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/ports"
)

// RotateKeysBatch is how many credentials `keys rotate` reads at a time.
const RotateKeysBatch = 100

// RotateKeys re-encrypts every stored credential and debug prompt log
// under the primary key (`codelotse keys rotate`).
type RotateKeys struct {
	// BatchSize overrides [RotateKeysBatch] when positive.
	BatchSize int
}

// RotateCounts count what a run did to one kind of ciphertext.
type RotateCounts struct {
	// Rotated were opened under an older key and sealed under the primary.
	Rotated int
	// AlreadyPrimary were sealed under the primary key already.
	AlreadyPrimary int
	// Skipped were changed by someone else between read and write (the
	// compare-and-swap lost); a second run picks them up if needed.
	Skipped int
	// Failed could not be opened (unknown key id, tampered, bound to
	// another row); FailedIDs names their rows, never their contents.
	Failed    int
	FailedIDs []string
}

// RotateKeysResult counts what a run did: credentials (the embedded
// counts) and prompt logs.
type RotateKeysResult struct {
	RotateCounts
	PromptLogs RotateCounts
}

// RotateKeysHandler rotates credentials and prompt logs.
type RotateKeysHandler struct {
	rotator ports.CredentialRotator
	prompts ports.PromptLogRotator
	cipher  app.Vault
}

// NewRotateKeysHandler returns the handler; prompts nil rotates
// credentials only.
func NewRotateKeysHandler(rotator ports.CredentialRotator, prompts ports.PromptLogRotator, cipher app.Vault) *RotateKeysHandler {
	return &RotateKeysHandler{rotator: rotator, prompts: prompts, cipher: cipher}
}

// sealedRow is one ciphertext to rotate: its row id and associated data.
type sealedRow struct {
	id     string
	aad    []byte
	sealed []byte
}

// Handle pages through every credential, then every prompt log, of every
// tenant in id order; each one not under the primary key is opened with
// its row's associated data, sealed again and written back only if still
// unchanged. It is idempotent: a second run rotates nothing. A ciphertext
// that cannot be opened is counted and the run goes on; an empty key ring
// (keys_unavailable) or a store error stops it, with the counts so far.
func (h *RotateKeysHandler) Handle(ctx context.Context, cmd RotateKeys) (RotateKeysResult, error) {
	var res RotateKeysResult
	if err := app.ProbeKeys(h.cipher); err != nil {
		return res, err
	}
	size := cmd.BatchSize
	if size <= 0 {
		size = RotateKeysBatch
	}
	err := h.rotate(ctx, size, &res.RotateCounts, func(ctx context.Context, after string) ([]sealedRow, error) {
		batch, err := h.rotator.Batch(ctx, after, size)
		rows := make([]sealedRow, len(batch))
		for i, c := range batch {
			rows[i] = sealedRow{id: c.ServerID, aad: app.CredentialAAD(c.ServerID), sealed: c.Encrypted}
		}
		return rows, err
	}, h.rotator.Replace)
	if err != nil || h.prompts == nil {
		return res, err
	}
	err = h.rotate(ctx, size, &res.PromptLogs, func(ctx context.Context, after string) ([]sealedRow, error) {
		batch, err := h.prompts.Batch(ctx, after, size)
		rows := make([]sealedRow, len(batch))
		for i, l := range batch {
			rows[i] = sealedRow{id: l.ID, aad: app.PromptLogAAD(l.ReviewID), sealed: l.Sealed}
		}
		return rows, err
	}, h.prompts.Replace)
	return res, err
}

func (h *RotateKeysHandler) rotate(ctx context.Context, size int, res *RotateCounts,
	batch func(ctx context.Context, after string) ([]sealedRow, error),
	replace func(ctx context.Context, id string, old, sealed []byte) (bool, error)) error {
	after := ""
	for {
		rows, err := batch(ctx, after)
		if err != nil {
			return fmt.Errorf("reading ciphertexts after %q: %w", after, err)
		}
		for _, r := range rows {
			after = r.id
			// Every ciphertext is opened, also one under the primary key
			// (app.Reseal); one that cannot be is reported, not counted
			// as done.
			sealed, primary, err := app.Reseal(h.cipher, r.aad, r.sealed)
			switch {
			case errors.Is(err, app.ErrNotOpened):
				res.Failed++
				res.FailedIDs = append(res.FailedIDs, r.id)
				continue
			case err != nil:
				return err
			case primary:
				res.AlreadyPrimary++
				continue
			}
			wrote, err := replace(ctx, r.id, r.sealed, sealed)
			if err != nil {
				return fmt.Errorf("writing ciphertext of %s: %w", r.id, err)
			}
			if wrote {
				res.Rotated++
			} else {
				res.Skipped++
			}
		}
		if len(rows) < size {
			return nil
		}
	}
}
