package portfake

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"slices"
	"sync"

	uid "github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// OAuthStates holds one tenant's pending code-flow connections by the hex
// of their state hash. A state of a server that no longer is in Servers
// is gone, as the foreign key's cascade deletes it (nil Servers: every
// server exists).
type OAuthStates struct {
	Rows    map[string]ports.OAuthState
	Servers *Servers
	// Err, when set, is returned by every call.
	Err error
}

func (f *OAuthStates) serverExists(id string) bool {
	if f.Servers == nil {
		return true
	}
	_, ok := f.Servers.Rows[id]
	return ok
}

func cloneState(st ports.OAuthState) ports.OAuthState {
	st.StateHash = bytes.Clone(st.StateHash)
	st.SessionHash = bytes.Clone(st.SessionHash)
	st.Sealed = bytes.Clone(st.Sealed)
	st.CredentialHash = bytes.Clone(st.CredentialHash)
	return st
}

func (f *OAuthStates) Insert(_ context.Context, st ports.OAuthState) error {
	if f.Err != nil {
		return f.Err
	}
	if len(st.StateHash) != 32 || len(st.SessionHash) != 32 || len(st.Sealed) == 0 || !st.ExpiresAt.After(st.CreatedAt) {
		return errors.New("fake: malformed oauth state")
	}
	if !uid.Valid(st.ServerID) || !f.serverExists(st.ServerID) {
		return ports.ErrNotFound
	}
	if f.Rows == nil {
		f.Rows = map[string]ports.OAuthState{}
	}
	key := hex.EncodeToString(st.StateHash)
	if _, ok := f.Rows[key]; ok {
		return ports.ErrConflict
	}
	for k, old := range f.Rows {
		if old.ExpiresAt.Before(st.CreatedAt) {
			delete(f.Rows, k)
		}
	}
	f.Rows[key] = cloneState(st)
	return nil
}

func (f *OAuthStates) Take(_ context.Context, stateHash []byte) (ports.OAuthState, error) {
	if f.Err != nil {
		return ports.OAuthState{}, f.Err
	}
	key := hex.EncodeToString(stateHash)
	st, ok := f.Rows[key]
	if !ok {
		return ports.OAuthState{}, ports.ErrNotFound
	}
	delete(f.Rows, key)
	if !f.serverExists(st.ServerID) {
		return ports.OAuthState{}, ports.ErrNotFound
	}
	return cloneState(st), nil
}

// OAuthClient is a scripted ports.OAuthClient: Discover answers
// Metadata (or DiscoverErr), Register RegisteredID and RegisteredSecret
// (or RegisterErr), ExchangeCode Tokens (or ExchangeErr). It records the
// calls. Safe for concurrent use.
type OAuthClient struct {
	mu               sync.Mutex
	Metadata         ports.OAuthMetadata
	DiscoverErr      error
	RegisteredID     string
	RegisteredSecret string
	RegisterErr      error
	Tokens           ports.OAuthTokens
	ExchangeErr      error
	// WhileExchanging runs inside ExchangeCode (without the lock): what
	// happens elsewhere while the token request is on its way.
	WhileExchanging func()

	Discovered []server.URL
	Issuers    []string // the issuer each Discover asked for
	Registered []string // the redirect URIs registered
	Exchanges  []ports.OAuthCodeExchange
}

// Discover answers Metadata whatever issuer asks for (it records it in
// Issuers): the application's own issuer check is what a test sees.
func (f *OAuthClient) Discover(_ context.Context, u server.URL, issuer string) (ports.OAuthMetadata, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Discovered = append(f.Discovered, u)
	f.Issuers = append(f.Issuers, issuer)
	if f.DiscoverErr != nil {
		return ports.OAuthMetadata{}, f.DiscoverErr
	}
	md := f.Metadata
	md.ScopesSupported = slices.Clone(md.ScopesSupported)
	md.CodeChallengeMethods = slices.Clone(md.CodeChallengeMethods)
	return md, nil
}

func (f *OAuthClient) Register(_ context.Context, _ ports.OAuthMetadata, redirectURI string, _ []string) (string, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Registered = append(f.Registered, redirectURI)
	if f.RegisterErr != nil {
		return "", "", f.RegisterErr
	}
	return f.RegisteredID, f.RegisteredSecret, nil
}

func (f *OAuthClient) ExchangeCode(_ context.Context, req ports.OAuthCodeExchange) (ports.OAuthTokens, error) {
	if f.WhileExchanging != nil {
		f.WhileExchanging()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Exchanges = append(f.Exchanges, req)
	if f.ExchangeErr != nil {
		return ports.OAuthTokens{}, f.ExchangeErr
	}
	return f.Tokens, nil
}

var _ ports.OAuthClient = (*OAuthClient)(nil)
