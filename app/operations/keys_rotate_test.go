package operations_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/operations"
	"github.com/codelotse/codelotse/ports/portfake"
)

func rotateID(n int) string { return fmt.Sprintf("%08x-2222-4222-8222-222222222222", n) }

// seedRotator stores n credentials sealed under key, starting at id start.
func seedRotator(f *portfake.Rotator, key string, start, n int) {
	c := &portfake.Cipher{Keys: []string{key}}
	for i := start; i < start+n; i++ {
		id := rotateID(i)
		sealed, _ := c.Seal([]byte(`{"type":"bearer","token":"tok`+id+`"}`), []byte("mcp_servers:"+id))
		f.Creds[id] = sealed
	}
}

func TestRotateKeys(t *testing.T) {
	rot := &portfake.Rotator{Creds: map[string][]byte{}}
	seedRotator(rot, "k1", 1, 5)                                              // old key
	seedRotator(rot, "k2", 6, 2)                                              // already primary
	seedRotator(rot, "k0", 8, 1)                                              // removed key: cannot open
	rot.Creds[rotateID(9)] = []byte("k1|mcp_servers:" + rotateID(1) + "|00")  // moved from another row
	rot.Creds[rotateID(10)] = []byte("k2|mcp_servers:" + rotateID(1) + "|00") // names the primary key, moved
	cipher := &portfake.Cipher{Keys: []string{"k2", "k1"}}
	h := operations.NewRotateKeysHandler(rot, nil, app.NewVault(cipher))

	res, err := h.Handle(context.Background(), operations.RotateKeys{BatchSize: 2})
	if err != nil {
		t.Fatalf("RotateKeys() = %v", err)
	}
	want := operations.RotateCounts{Rotated: 5, AlreadyPrimary: 2, Failed: 3, FailedIDs: []string{rotateID(8), rotateID(9), rotateID(10)}}
	if res.Rotated != want.Rotated || res.AlreadyPrimary != want.AlreadyPrimary || res.Failed != want.Failed || res.Skipped != 0 || !slices.Equal(res.FailedIDs, want.FailedIDs) {
		t.Errorf("RotateKeys() = %+v, want %+v", res, want)
	}
	if rot.Batches != 6 { // 10 credentials in batches of 2, then an empty one
		t.Errorf("batches = %d, want 6", rot.Batches)
	}
	for i := 1; i <= 7; i++ {
		id := rotateID(i)
		if !cipher.IsPrimary(rot.Creds[id]) {
			t.Errorf("credential %s not under the primary key", id)
		}
		plain, err := cipher.Open(rot.Creds[id], []byte("mcp_servers:"+id))
		if err != nil || !strings.Contains(string(plain), "tok"+id) {
			t.Errorf("credential %s = %q, %v", id, plain, err)
		}
	}

	// Idempotent: a second run rotates nothing.
	res, err = h.Handle(context.Background(), operations.RotateKeys{})
	if err != nil || res.Rotated != 0 || res.AlreadyPrimary != 7 || res.Failed != 3 {
		t.Errorf("second RotateKeys() = %+v, %v", res, err)
	}
}

func TestRotateKeysLostRace(t *testing.T) {
	rot := &portfake.Rotator{Creds: map[string][]byte{}}
	seedRotator(rot, "k1", 1, 2)
	cipher := &portfake.Cipher{Keys: []string{"k2", "k1"}}
	rot.BeforeReplace = func(id string) {
		if id == rotateID(1) { // an API request replaced the credential meanwhile
			rot.Creds[id], _ = cipher.Seal([]byte(`{"type":"none"}`), []byte("mcp_servers:"+id))
		}
	}
	res, err := operations.NewRotateKeysHandler(rot, nil, app.NewVault(cipher)).Handle(context.Background(), operations.RotateKeys{})
	if err != nil || res.Rotated != 1 || res.Skipped != 1 {
		t.Errorf("RotateKeys() = %+v, %v, want 1 rotated, 1 skipped", res, err)
	}
	if plain, _ := cipher.Open(rot.Creds[rotateID(1)], []byte("mcp_servers:"+rotateID(1))); string(plain) != `{"type":"none"}` {
		t.Errorf("rotation overwrote a concurrent change: %q", plain)
	}
}

func TestRotateKeysWithoutKeys(t *testing.T) {
	rot := &portfake.Rotator{Creds: map[string][]byte{}}
	seedRotator(rot, "k1", 1, 1)
	for _, c := range []*operations.RotateKeysHandler{
		operations.NewRotateKeysHandler(rot, nil, app.NewVault(&portfake.Cipher{})),
		operations.NewRotateKeysHandler(rot, nil, app.Vault{}),
	} {
		_, err := c.Handle(context.Background(), operations.RotateKeys{})
		var e *app.Error
		if !errors.As(err, &e) || e.Code != app.CodeKeysUnavailable {
			t.Errorf("RotateKeys() without keys = %v, want keys_unavailable", err)
		}
	}
	if rot.Batches != 0 {
		t.Errorf("read %d batches without keys", rot.Batches)
	}
}

func TestRotateKeysEmptyStore(t *testing.T) {
	rot := &portfake.Rotator{Creds: map[string][]byte{}}
	res, err := operations.NewRotateKeysHandler(rot, nil, app.NewVault(&portfake.Cipher{Keys: []string{"k1"}})).Handle(context.Background(), operations.RotateKeys{})
	if err != nil || res.Rotated+res.AlreadyPrimary+res.Failed+res.Skipped != 0 {
		t.Errorf("RotateKeys() on an empty store = %+v, %v", res, err)
	}
}
