package porttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// OAuthServers is the contract of the OAuth part of [ports.ServerRepo]:
// the public view of an OAuth credential is stored beside the kind and
// hint, replaced by Update and by a connection (uses Tenants and
// Accounts).
func OAuthServers(t *testing.T, open Open) {
	t.Run("Insert, Update and Connect keep the OAuth view", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		u, _ := server.ParseURL("https://oauth.example.com/mcp")
		n, _ := server.ParseName("oauth")
		cc, err := server.NewOAuthClientCredentials("https://as.example.com/token", "client-1", "secret-123456", []string{"read", "mcp:tools"})
		if err != nil {
			t.Fatal(err)
		}
		s, err := server.NewServer(NewID(t), tenant, n, u, cc, true, T0)
		if err != nil {
			t.Fatal(err)
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			return tx.Servers().Insert(ctx, s, []byte{1}, 20)
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got := must(tx.Servers().Get(ctx, s.ID()))
			sameServer(t, got, s)
			return nil
		})
		code, err := server.NewOAuthAuthorizationCode("", "", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		tokenURL, _ := server.ParseURL("https://as.example.com/token")
		connected, err := code.WithRegisteredClient("dcr-1", "", "https://as.example.com")
		if err == nil {
			connected, err = connected.WithConnection("https://as.example.com", tokenURL, "refresh", "token:ci", T0.Add(time.Minute))
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, step := range []func(s *server.Server) error{
			func(s *server.Server) error {
				_, err := s.Apply(server.Patch{Credential: &code}, T0.Add(time.Second))
				return err
			},
			// A refused Connect is kept in the view (auth_public).
			func(s *server.Server) error {
				s.RefuseConnection(server.RefusedIssuerMismatch)
				return nil
			},
			func(s *server.Server) error { return s.Connect(connected, T0.Add(time.Minute)) },
		} {
			var want *server.Server
			h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
				var err error
				want, err = tx.Servers().Update(ctx, s.ID(), func(s *server.Server) (ports.CredentialUpdate, error) {
					return ports.CredentialUpdate{Replace: true, Encrypted: []byte{2}}, step(s)
				})
				return err
			})
			h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
				got := must(tx.Servers().Get(ctx, s.ID()))
				sameServer(t, got, want)
				if i == 1 && (got.OAuth().Refused != server.RefusedIssuerMismatch || got.LastError() != "server_unauthorized") {
					t.Errorf("refused connection read back as %q / %q", got.OAuth().Refused, got.LastError())
				}
				return nil
			})
		}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got := must(tx.Servers().Get(ctx, s.ID())).OAuth()
			if got.ClientID != "dcr-1" || got.ConnectedBy != "token:ci" || !got.ConnectedAt.Equal(T0.Add(time.Minute)) {
				t.Errorf("connected view = %+v", got)
			}
			return nil
		})
	})
}

func stateHash(t *testing.T) []byte {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func newState(t *testing.T, serverID string, at time.Time) ports.OAuthState {
	return ports.OAuthState{
		StateHash: stateHash(t), ServerID: serverID, SessionHash: stateHash(t), Sealed: []byte{9, 8, 7},
		CredentialHash: stateHash(t), Issuer: "https://as.example.com",
		AuthorizationEndpoint: "https://as.example.com/authorize", TokenEndpoint: "https://as.example.com/token",
		IssParameterSupported: true, RedirectURI: "https://codelotse.example.com/ui/oauth/callback",
		CreatedAt: at, ExpiresAt: at.Add(10 * time.Minute),
	}
}

// OAuthStateRepo is the contract of [ports.OAuthStateRepo] (uses Tenants
// and Accounts).
func OAuthStateRepo(t *testing.T, open Open) {
	t.Run("Take returns the stored state once", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		srv := h.seedServer(t, tenant, "wiki", nil)
		st := newState(t, srv, T0)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error { return tx.OAuthStates().Insert(ctx, st) })
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.OAuthStates().Take(ctx, st.StateHash)
			if err != nil {
				return err
			}
			if !bytes.Equal(got.StateHash, st.StateHash) || got.ServerID != st.ServerID || !bytes.Equal(got.SessionHash, st.SessionHash) ||
				!bytes.Equal(got.Sealed, st.Sealed) || !bytes.Equal(got.CredentialHash, st.CredentialHash) || got.Issuer != st.Issuer ||
				got.AuthorizationEndpoint != st.AuthorizationEndpoint || got.TokenEndpoint != st.TokenEndpoint ||
				got.IssParameterSupported != st.IssParameterSupported || got.RedirectURI != st.RedirectURI ||
				!got.CreatedAt.Equal(st.CreatedAt) || !got.ExpiresAt.Equal(st.ExpiresAt) {
				t.Errorf("Take = %+v\nwant %+v", got, st)
			}
			_, err = tx.OAuthStates().Take(ctx, st.StateHash)
			isErr(t, "second Take", err, ports.ErrNotFound)
			return nil
		})
	})

	t.Run("another tenant's state, an unknown hash and a deleted server's state are ErrNotFound", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		srv := h.seedServer(t, tenant, "wiki", nil)
		gone := h.seedServer(t, tenant, "gone", nil)
		st, st2 := newState(t, srv, T0), newState(t, gone, T0)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.OAuthStates().Insert(ctx, st); err != nil {
				return err
			}
			if err := tx.OAuthStates().Insert(ctx, st2); err != nil {
				return err
			}
			return tx.Servers().Delete(ctx, gone)
		})
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			_, err := tx.OAuthStates().Take(ctx, st.StateHash)
			isErr(t, "Take in another tenant", err, ports.ErrNotFound)
			isErr(t, "Insert for another tenant's server", tx.OAuthStates().Insert(ctx, newState(t, srv, T0)), ports.ErrNotFound)
			return nil
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			_, err := tx.OAuthStates().Take(ctx, stateHash(t))
			isErr(t, "Take of an unknown hash", err, ports.ErrNotFound)
			_, err = tx.OAuthStates().Take(ctx, st2.StateHash)
			isErr(t, "Take of a deleted server's state", err, ports.ErrNotFound)
			isErr(t, "Insert of a known hash", tx.OAuthStates().Insert(ctx, st), ports.ErrConflict)
			// The other tenant's attempt left the state in place.
			_, err = tx.OAuthStates().Take(ctx, st.StateHash)
			return err
		})
	})

	t.Run("Insert deletes the tenant's expired states; Take returns an unexpired-by-clock state as stored", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		srv := h.seedServer(t, tenant, "wiki", nil)
		old, recent := newState(t, srv, T0), newState(t, srv, T0.Add(5*time.Minute))
		later := newState(t, srv, T0.Add(11*time.Minute))
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			for _, st := range []ports.OAuthState{old, recent, later} {
				if err := tx.OAuthStates().Insert(ctx, st); err != nil {
					return err
				}
			}
			return nil
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			_, err := tx.OAuthStates().Take(ctx, old.StateHash)
			isErr(t, "Take of an expired state after a later Insert", err, ports.ErrNotFound)
			for _, st := range []ports.OAuthState{recent, later} {
				if _, err := tx.OAuthStates().Take(ctx, st.StateHash); err != nil {
					t.Errorf("Take of a live state: %v", err)
				}
			}
			return nil
		})
	})
}
