package registry_test

import (
	"bytes"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/ports/portfake"
)

// Each of these tests of the connection controls fails when its control
// is removed.

// TestDCRIssuersCompareExactly: an issuer that merely starts with a
// listed one (a longer host name, a path below it) is not listed, and no
// client is registered there.
func TestDCRIssuersCompareExactly(t *testing.T) {
	for _, issuer := range []string{"https://as.example.com.evil.test", "https://as.example.com/other", "https://as.example.co"} {
		t.Run(issuer, func(t *testing.T) {
			e := newConnectEnv(t)
			e.deps.DCRIssuers = registry.DCRIssuers{cnIssuer}
			e.oauth.Metadata.Issuer = issuer
			s := e.codeServer(t, "")
			_, err := e.start(srvPrincipalA, s.ID())
			if ae := srvWantCode(t, err, app.CodeValidationFailed); ae.Fields["auth.clientId"] == "" {
				t.Errorf("refusal fields %v, want auth.clientId", ae.Fields)
			}
			if len(e.oauth.Registered) != 0 {
				t.Errorf("a client was registered at %s, which only starts like the listed %s", issuer, cnIssuer)
			}
		})
	}
	// The listed issuer itself registers (the test can fail both ways).
	e := newConnectEnv(t)
	e.deps.DCRIssuers = registry.DCRIssuers{cnIssuer}
	if _, err := e.start(srvPrincipalA, e.codeServer(t, "").ID()); err != nil || len(e.oauth.Registered) != 1 {
		t.Errorf("the listed issuer: %v, %d registrations; want one", err, len(e.oauth.Registered))
	}
}

// TestSealedVerifierOpensOnlyUnderItsOwnState: the sealed verifier of a
// pending connection is bound to its state's hash; another pending
// state's sealed verifier copied into it does not open, and no code is
// exchanged.
func TestSealedVerifierOpensOnlyUnderItsOwnState(t *testing.T) {
	e, first, states, keys := twoPendingConnections(t)
	sealed := states.Sealed
	if bytes.Equal(sealed[keys[0]], sealed[keys[1]]) {
		t.Fatal("two pending states hold the same sealed verifier")
	}
	sealed[keys[0]], sealed[keys[1]] = sealed[keys[1]], sealed[keys[0]]

	if _, err := e.finish(srvPrincipalA, callback(t, first)); err == nil {
		t.Fatal("FinishConnect opened another state's sealed verifier")
	}
	if len(e.oauth.Exchanges) != 0 {
		t.Errorf("%d code exchanges with another state's verifier", len(e.oauth.Exchanges))
	}
}

// TestAConnectionTakenUnderAnotherStateIsRefused: a pending connection
// (with its own sealed verifier) that a store hands back for another
// state's hash is refused as an unknown state: the connection itself
// checks the callback's state, and no code is exchanged.
func TestAConnectionTakenUnderAnotherStateIsRefused(t *testing.T) {
	e, first, states, keys := twoPendingConnections(t)
	rows, sealed := states.Rows, states.Sealed
	rows[keys[0]], rows[keys[1]] = rows[keys[1]], rows[keys[0]]
	sealed[keys[0]], sealed[keys[1]] = sealed[keys[1]], sealed[keys[0]]

	_, err := e.finish(srvPrincipalA, callback(t, first))
	if ae := srvWantCode(t, err, app.CodeValidationFailed); ae.Fields["state"] != "is unknown or already used; connect again" {
		t.Errorf("refusal fields %v, want the unknown state's answer", ae.Fields)
	}
	if len(e.oauth.Exchanges) != 0 {
		t.Errorf("%d code exchanges for another state's connection", len(e.oauth.Exchanges))
	}
}

// twoPendingConnections starts two connections of one server; it returns
// the first one's authorization URL, the fake store of pending states and
// their two keys (each with its row and its sealed secret).
func twoPendingConnections(t *testing.T) (*connectEnv, string, *portfake.OAuthStates, []string) {
	t.Helper()
	e := newConnectEnv(t)
	s := e.codeServer(t, "client-1")
	first, err := e.start(srvPrincipalA, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.start(srvPrincipalA, s.ID()); err != nil {
		t.Fatal(err)
	}
	states := e.tenants.Txs[srvTenantA].OAuthStateRepo
	if len(states.Rows) != 2 || len(states.Sealed) != 2 {
		t.Fatalf("%d pending states, %d sealed secrets; want 2", len(states.Rows), len(states.Sealed))
	}
	var keys []string
	for k := range states.Rows {
		keys = append(keys, k)
	}
	return e, first, states, keys
}
