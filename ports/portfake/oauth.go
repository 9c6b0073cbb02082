package portfake

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// OAuthStates holds one tenant's pending code-flow connections and their
// sealed secrets, both by the hex of the state hash. Its rows are pending
// connections as a database would hold them: Insert and Take build each
// again through server.UnmarshalPendingConnectionFromDatabase, as
// PostgreSQL's rows are read. A state of a server that no longer is in
// Servers is gone, as the foreign key's cascade deletes it (nil Servers:
// every server exists).
type OAuthStates struct {
	Rows    map[string]*server.PendingConnection
	Sealed  map[string][]byte
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

// loadState is pc through its stored columns.
func loadState(pc *server.PendingConnection) (*server.PendingConnection, error) {
	return server.UnmarshalPendingConnectionFromDatabase(pc.StateHash(), pc.ServerID(), pc.SessionHash(), pc.CredentialHash(),
		pc.Issuer(), pc.AuthorizationEndpoint().String(), pc.TokenEndpoint().String(), pc.IssRequired(),
		pc.RedirectURI(), pc.CreatedAt(), pc.ExpiresAt())
}

func (f *OAuthStates) Insert(_ context.Context, pc *server.PendingConnection, sealed []byte) error {
	if f.Err != nil {
		return f.Err
	}
	if pc == nil || len(sealed) == 0 {
		return errors.New("fake: insert oauth state: a pending connection and its sealed secret are required")
	}
	row, err := loadState(pc)
	if err != nil {
		return fmt.Errorf("fake: insert oauth state: %w", err)
	}
	if !f.serverExists(row.ServerID()) {
		return ports.ErrNotFound
	}
	if f.Rows == nil {
		f.Rows = map[string]*server.PendingConnection{}
	}
	if f.Sealed == nil {
		f.Sealed = map[string][]byte{}
	}
	key := hex.EncodeToString(row.StateHash())
	if _, ok := f.Rows[key]; ok {
		return ports.ErrConflict
	}
	for k, old := range f.Rows {
		if old.ExpiresAt().Before(row.CreatedAt()) {
			delete(f.Rows, k)
			delete(f.Sealed, k)
		}
	}
	f.Rows[key] = row
	f.Sealed[key] = bytes.Clone(sealed)
	return nil
}

func (f *OAuthStates) Take(_ context.Context, stateHash []byte) (*server.PendingConnection, []byte, error) {
	if f.Err != nil {
		return nil, nil, f.Err
	}
	key := hex.EncodeToString(stateHash)
	row, ok := f.Rows[key]
	sealed := f.Sealed[key]
	if !ok {
		return nil, nil, ports.ErrNotFound
	}
	delete(f.Rows, key)
	delete(f.Sealed, key)
	if !f.serverExists(row.ServerID()) {
		return nil, nil, ports.ErrNotFound
	}
	pc, err := loadState(row)
	if err != nil {
		return nil, nil, fmt.Errorf("fake: take oauth state: %w", err)
	}
	return pc, bytes.Clone(sealed), nil
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
	// RegisteredAuth are the methods the registrations asked for.
	RegisteredAuth []server.ClientAuth
	Exchanges      []ports.OAuthCodeExchange
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

func (f *OAuthClient) Register(_ context.Context, _ ports.OAuthMetadata, redirectURI string, _ []string, auth server.ClientAuth) (ports.OAuthRegistration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Registered = append(f.Registered, redirectURI)
	f.RegisteredAuth = append(f.RegisteredAuth, auth)
	if f.RegisterErr != nil {
		return ports.OAuthRegistration{}, f.RegisterErr
	}
	return ports.OAuthRegistration{ClientID: f.RegisteredID, ClientSecret: f.RegisteredSecret, ClientAuth: auth}, nil
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
