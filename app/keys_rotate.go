package app

import (
	"context"
	"fmt"

	"github.com/codelotse/codelotse/ports"
)

// RotateKeysBatch is how many credentials `keys rotate` reads at a time.
const RotateKeysBatch = 100

// RotateKeys re-encrypts every stored credential under the primary key
// (`codelotse keys rotate`).
type RotateKeys struct {
	// BatchSize overrides [RotateKeysBatch] when positive.
	BatchSize int
}

// RotateKeysResult counts what a run did.
type RotateKeysResult struct {
	// Rotated were opened under an older key and sealed under the primary.
	Rotated int
	// AlreadyPrimary were sealed under the primary key already.
	AlreadyPrimary int
	// Skipped were changed by someone else between read and write (the
	// compare-and-swap lost); a second run picks them up if needed.
	Skipped int
	// Failed could not be opened (unknown key id, tampered, bound to
	// another row); FailedIDs names their servers, never their contents.
	Failed    int
	FailedIDs []string
}

// RotateKeysHandler rotates credentials.
type RotateKeysHandler struct {
	rotator ports.CredentialRotator
	cipher  ports.Cipher
}

// NewRotateKeysHandler returns the handler.
func NewRotateKeysHandler(rotator ports.CredentialRotator, cipher ports.Cipher) *RotateKeysHandler {
	return &RotateKeysHandler{rotator: rotator, cipher: cipher}
}

// Handle pages through every credential of every tenant in id order; each
// one not under the primary key is opened with its row's associated data,
// sealed again and written back only if still unchanged. It is idempotent:
// a second run rotates nothing. A credential that cannot be opened is
// counted and the run goes on; an empty key ring (keys_unavailable) or a
// store error stops it, with the counts so far.
func (h *RotateKeysHandler) Handle(ctx context.Context, cmd RotateKeys) (RotateKeysResult, error) {
	var res RotateKeysResult
	if h.cipher == nil {
		return res, srvKeysUnavailable(nil)
	}
	if _, err := h.cipher.Seal(nil, CredentialAAD("probe")); err != nil {
		return res, srvKeysUnavailable(err)
	}
	size := cmd.BatchSize
	if size <= 0 {
		size = RotateKeysBatch
	}
	after := ""
	for {
		batch, err := h.rotator.Batch(ctx, after, size)
		if err != nil {
			return res, fmt.Errorf("reading credentials after %q: %w", after, err)
		}
		for _, c := range batch {
			after = c.ServerID
			// Every credential is opened, also one that names the primary
			// key: the key id alone proves nothing, and a credential that
			// cannot be opened (tampered, bound to another row) must be
			// reported, not counted as done.
			aad := CredentialAAD(c.ServerID)
			plain, err := h.cipher.Open(c.Encrypted, aad)
			if err != nil {
				res.Failed++
				res.FailedIDs = append(res.FailedIDs, c.ServerID)
				continue
			}
			if h.cipher.IsPrimary(c.Encrypted) {
				clear(plain)
				res.AlreadyPrimary++
				continue
			}
			sealed, err := h.cipher.Seal(plain, aad)
			clear(plain)
			if err != nil {
				return res, srvKeysUnavailable(err)
			}
			wrote, err := h.rotator.Replace(ctx, c.ServerID, c.Encrypted, sealed)
			if err != nil {
				return res, fmt.Errorf("writing credential of server %s: %w", c.ServerID, err)
			}
			if wrote {
				res.Rotated++
			} else {
				res.Skipped++
			}
		}
		if len(batch) < size {
			return res, nil
		}
	}
}
