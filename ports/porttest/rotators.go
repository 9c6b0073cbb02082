package porttest

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/codelotse/codelotse/ports"
)

// CredentialRotator is the contract of [ports.CredentialRotator] (uses
// Credentials, and Tenants and Accounts to store the servers). Other
// subtests may share the store, so a check looks at its own rows only.
func CredentialRotator(t *testing.T, open Open) {
	t.Run("Batch pages every stored credential of every tenant by server id", func(t *testing.T) {
		h := open(t)
		a, b := h.tenant(t), h.tenant(t)
		want := map[string][]byte{}
		for i, tenant := range []string{a, a, b, b, b} {
			name := string(rune('a'+i)) + "srv"
			want[h.seedServer(t, tenant, name, []byte{byte(i), 0, 0xff})] = []byte{byte(i), 0, 0xff}
		}
		without := h.seedServer(t, a, "nocred", nil)
		got := map[string][]byte{}
		var ids []string
		pages(t, 2, func(after string, limit int) []string {
			batch := must(h.Credentials.Batch(t.Context(), after, limit))
			var page []string
			for _, c := range batch {
				page = append(page, c.ServerID)
				if _, mine := want[c.ServerID]; mine || c.ServerID == without {
					if _, dup := got[c.ServerID]; dup {
						t.Errorf("credential of %s returned twice", c.ServerID)
					}
					got[c.ServerID] = c.Encrypted
				}
			}
			ids = append(ids, page...)
			return page
		})
		if !slices.IsSorted(ids) {
			t.Errorf("Batch pages are not in id order: %v", ids)
		}
		if _, ok := got[without]; ok {
			t.Error("Batch returned a server without a credential")
		}
		delete(got, without)
		if len(got) != len(want) {
			t.Errorf("Batch returned %d of the %d credentials", len(got), len(want))
		}
		for id, w := range want {
			if !bytes.Equal(got[id], w) {
				t.Errorf("credential of %s = %x, want %x", id, got[id], w)
			}
		}
		if got := must(h.Credentials.Batch(t.Context(), "", 0)); len(got) != 0 {
			t.Errorf("Batch with limit 0 = %d credentials", len(got))
		}
	})

	t.Run("Replace writes only over the credential it was given (compare-and-swap), and is no change of the server", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedServer(t, tenant, "wiki", []byte("old"))
		none := h.seedServer(t, tenant, "plain", nil)
		var before time.Time
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			before = must(tx.Servers().Get(ctx, id)).UpdatedAt()
			return nil
		})
		for _, c := range []struct {
			id       string
			old, new string
			ok       bool
		}{
			{id, "stale", "x", false},
			{id, "", "x", false}, // nil old: never matches
			{none, "", "x", false},
			{NewID(t), "old", "x", false},
			{"not-a-uuid", "old", "x", false},
			{id, "old", "new", true},
			{id, "old", "newer", false}, // a second rotation with the same old
		} {
			var old []byte
			if c.old != "" {
				old = []byte(c.old)
			}
			ok, err := h.Credentials.Replace(t.Context(), c.id, old, []byte(c.new))
			if err != nil || ok != c.ok {
				t.Errorf("Replace(%s, %q, %q) = %v, %v; want %v", c.id, c.old, c.new, ok, err, c.ok)
			}
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if enc := must(tx.Servers().Credential(ctx, id)); string(enc) != "new" {
				t.Errorf("credential = %q, want new", enc)
			}
			if enc := must(tx.Servers().Credential(ctx, none)); enc != nil {
				t.Errorf("a server without a credential got %q", enc)
			}
			if after := must(tx.Servers().Get(ctx, id)).UpdatedAt(); !after.Equal(before) {
				t.Errorf("UpdatedAt moved from %v to %v on a re-encryption", before, after)
			}
			return nil
		})
	})
}

// PromptLogRotator is the contract of [ports.PromptLogRotator] (uses
// PromptLogs, and Tenants and Accounts to store the logs).
func PromptLogRotator(t *testing.T, open Open) {
	h := open(t)
	a, b := h.tenant(t), h.tenant(t)
	reviews := map[string]string{} // review id → tenant
	for _, tenant := range []string{a, b} {
		id := h.seedReview(t, tenant, h.seedRepository(t, tenant, "acme/api"), T0)
		reviews[id] = tenant
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			for turn := 1; turn <= 3; turn++ {
				err := tx.PromptLogs().Insert(ctx, ports.PromptLog{ReviewID: id, Step: ports.StepFinder, Turn: turn,
					Sealed: []byte("old|" + id), CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)})
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	mine := func() map[string]ports.SealedPromptLog {
		out := map[string]ports.SealedPromptLog{}
		var ids []string
		pages(t, 2, func(after string, limit int) []string {
			var page []string
			for _, l := range must(h.PromptLogs.Batch(t.Context(), after, limit)) {
				page = append(page, l.ID)
				if _, ok := reviews[l.ReviewID]; ok {
					if _, dup := out[l.ID]; dup {
						t.Errorf("log %s returned twice", l.ID)
					}
					out[l.ID] = l
				}
			}
			ids = append(ids, page...)
			return page
		})
		if !slices.IsSorted(ids) {
			t.Errorf("Batch pages are not in id order: %v", ids)
		}
		return out
	}

	t.Run("Batch pages every log of every tenant by id, with its run and ciphertext", func(t *testing.T) {
		logs := mine()
		if len(logs) != 6 {
			t.Fatalf("Batch returned %d of the 6 logs", len(logs))
		}
		for _, l := range logs {
			if string(l.Sealed) != "old|"+l.ReviewID {
				t.Errorf("log %s of run %s: sealed %q", l.ID, l.ReviewID, l.Sealed)
			}
		}
		if got := must(h.PromptLogs.Batch(t.Context(), "", 0)); len(got) != 0 {
			t.Errorf("Batch with limit 0 = %d logs", len(got))
		}
	})

	t.Run("Replace writes only over the ciphertext it was given (compare-and-swap)", func(t *testing.T) {
		var target ports.SealedPromptLog
		for _, l := range mine() {
			target = l
			break
		}
		for _, c := range []struct {
			old, new string
			ok       bool
		}{{"stale", "x", false}, {string(target.Sealed), "new", true}, {string(target.Sealed), "newer", false}} {
			ok, err := h.PromptLogs.Replace(t.Context(), target.ID, []byte(c.old), []byte(c.new))
			if err != nil || ok != c.ok {
				t.Errorf("Replace(%q, %q) = %v, %v; want %v", c.old, c.new, ok, err, c.ok)
			}
		}
		for id, l := range mine() {
			want := "old|" + l.ReviewID
			if id == target.ID {
				want = "new"
			}
			if string(l.Sealed) != want {
				t.Errorf("log %s: sealed %q, want %q", id, l.Sealed, want)
			}
		}
		// The run's reader sees the new ciphertext.
		h.in(t, reviews[target.ReviewID], func(ctx context.Context, tx ports.TenantTx) error {
			n := 0
			for _, l := range must(tx.PromptLogs().List(ctx, target.ReviewID, T0)) {
				if string(l.Sealed) == "new" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("List shows %d re-sealed logs, want 1", n)
			}
			return nil
		})
	})
}

// pages calls batch from the start until it returns an empty page, each
// time after the last id of the previous page, and checks every page
// holds at most limit ids, each after the previous page.
func pages(t *testing.T, limit int, batch func(after string, limit int) []string) {
	t.Helper()
	after := ""
	for n := 0; ; n++ {
		if n > 10000 {
			t.Fatal("paging does not end")
		}
		page := batch(after, limit)
		if len(page) == 0 {
			return
		}
		if len(page) > limit {
			t.Errorf("a page of %d, limit %d", len(page), limit)
		}
		for _, id := range page {
			if id <= after {
				t.Errorf("id %s in the page after %s", id, after)
			}
		}
		after = page[len(page)-1]
	}
}
