package porttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
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
		cc, err := server.NewOAuthClientCredentials("https://as.example.com/token", "client-1", "secret-123456", []string{"read", "mcp:tools"}, "", "")
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
		code, err := server.NewOAuthAuthorizationCode("", "", "", nil, "")
		if err != nil {
			t.Fatal(err)
		}
		tokenURL, _ := server.ParseURL("https://as.example.com/token")
		connected, err := code.WithRegisteredClient("dcr-1", "", "https://as.example.com", "")
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

// pendingState is a started connection as the contract stores it: the
// connection, the state and session it was started with (never stored)
// and its sealed secret.
type pendingState struct {
	pc             *server.PendingConnection
	state, session string
	sealed         []byte
}

func newState(t *testing.T, serverID string, at time.Time) pendingState {
	t.Helper()
	authz, _ := server.ParseURL("https://as.example.com/authorize")
	token, _ := server.ParseURL("https://as.example.com/token")
	as := server.AuthorizationServer{Issuer: "https://as.example.com", AuthorizationEndpoint: authz, TokenEndpoint: token, IssParameterSupported: true}
	st := pendingState{state: hex.EncodeToString(stateHash(t)), session: hex.EncodeToString(stateHash(t)), sealed: append([]byte{9, 8, 7}, stateHash(t)...)}
	var err error
	st.pc, err = server.NewPendingConnection(st.state, st.session, serverID, stateHash(t), as, "https://codelotse.example.com/ui/oauth/callback", at)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func (st pendingState) insert(ctx context.Context, tx ports.TenantTx) error {
	return tx.OAuthStates().Insert(ctx, st.pc, st.sealed)
}

// samePending reports how got differs from want, "" when it does not.
func samePending(got, want *server.PendingConnection) string {
	switch {
	case got == nil:
		return "nil"
	case !bytes.Equal(got.StateHash(), want.StateHash()):
		return "state hash"
	case got.ServerID() != want.ServerID():
		return "server id"
	case !bytes.Equal(got.SessionHash(), want.SessionHash()):
		return "session hash"
	case !bytes.Equal(got.CredentialHash(), want.CredentialHash()):
		return "credential hash"
	case got.Issuer() != want.Issuer():
		return "issuer"
	case got.AuthorizationEndpoint() != want.AuthorizationEndpoint():
		return "authorization endpoint"
	case got.TokenEndpoint() != want.TokenEndpoint():
		return "token endpoint"
	case got.IssRequired() != want.IssRequired():
		return "iss required"
	case got.RedirectURI() != want.RedirectURI():
		return "redirect URI"
	case !got.CreatedAt().Equal(want.CreatedAt()):
		return "created at"
	case !got.ExpiresAt().Equal(want.ExpiresAt()):
		return "expires at"
	}
	return ""
}

// OAuthStateRepo is the contract of [ports.OAuthStateRepo] (uses Tenants
// and Accounts).
func OAuthStateRepo(t *testing.T, open Open) {
	t.Run("Take returns the stored connection and its sealed secret once", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		srv := h.seedServer(t, tenant, "wiki", nil)
		st := newState(t, srv, T0)
		h.in(t, tenant, st.insert)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got, sealed, err := tx.OAuthStates().Take(ctx, st.pc.StateHash())
			if err != nil {
				return err
			}
			if diff := samePending(got, st.pc); diff != "" || !bytes.Equal(sealed, st.sealed) {
				t.Errorf("Take = %+v, sealed %x: %s differs", got, sealed, diff)
			}
			// The loaded connection is the started one: it accepts the
			// callback of its state and session, once.
			cb, err := server.NewCallback(st.state, "code-1", "https://as.example.com", "")
			if err != nil {
				return err
			}
			if got != nil {
				if err := got.Finish(T0.Add(time.Minute), st.session, cb); err != nil {
					t.Errorf("Finish of the taken connection = %v", err)
				}
			}
			_, _, err = tx.OAuthStates().Take(ctx, st.pc.StateHash())
			isErr(t, "second Take", err, ports.ErrNotFound)
			return nil
		})
	})

	t.Run("Insert without a sealed secret stores nothing", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		srv := h.seedServer(t, tenant, "wiki", nil)
		st := newState(t, srv, T0)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			for _, sealed := range [][]byte{nil, {}} {
				if err := tx.OAuthStates().Insert(ctx, st.pc, sealed); err == nil {
					t.Errorf("Insert with the sealed secret %q succeeded", sealed)
				}
			}
			return nil
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			_, _, err := tx.OAuthStates().Take(ctx, st.pc.StateHash())
			isErr(t, "Take after the refused Inserts", err, ports.ErrNotFound)
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
			if err := st.insert(ctx, tx); err != nil {
				return err
			}
			if err := st2.insert(ctx, tx); err != nil {
				return err
			}
			return tx.Servers().Delete(ctx, gone)
		})
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			_, _, err := tx.OAuthStates().Take(ctx, st.pc.StateHash())
			isErr(t, "Take in another tenant", err, ports.ErrNotFound)
			isErr(t, "Insert for another tenant's server", newState(t, srv, T0).insert(ctx, tx), ports.ErrNotFound)
			return nil
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			_, _, err := tx.OAuthStates().Take(ctx, stateHash(t))
			isErr(t, "Take of an unknown hash", err, ports.ErrNotFound)
			_, _, err = tx.OAuthStates().Take(ctx, st2.pc.StateHash())
			isErr(t, "Take of a deleted server's state", err, ports.ErrNotFound)
			isErr(t, "Insert of a known hash", st.insert(ctx, tx), ports.ErrConflict)
			// The other tenant's attempt left the state in place.
			_, _, err = tx.OAuthStates().Take(ctx, st.pc.StateHash())
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
			for _, st := range []pendingState{old, recent, later} {
				if err := st.insert(ctx, tx); err != nil {
					return err
				}
			}
			return nil
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			_, _, err := tx.OAuthStates().Take(ctx, old.pc.StateHash())
			isErr(t, "Take of an expired state after a later Insert", err, ports.ErrNotFound)
			for _, st := range []pendingState{recent, later} {
				if _, _, err := tx.OAuthStates().Take(ctx, st.pc.StateHash()); err != nil {
					t.Errorf("Take of a live state: %v", err)
				}
			}
			return nil
		})
	})
}
