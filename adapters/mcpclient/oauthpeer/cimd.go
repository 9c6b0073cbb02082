package oauthpeer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Client ID metadata documents (draft-ietf-oauth-client-id-metadata-
// document, the MCP authorization of 2026-07-28), when
// Options.ClientIDMetadataDocuments is set: the metadata announces
// client_id_metadata_document_supported, and a client id that is an
// https URL is the URL of the client's metadata document, which the peer
// fetches itself (Options.DocumentClient, no redirects followed, 64 KiB
// at most) the first time the provider asks for the client, and checks:
//
//   - the URL: https, a host, a path other than "/", no user info,
//     fragment, or "." and ".." segments;
//   - the answer: 200 and a JSON object whose client_id is exactly the
//     URL fetched; redirect_uris not empty, each an absolute URL;
//     grant_types (when present) with authorization_code; no
//     client_secret; token_endpoint_auth_method "none" or
//     "private_key_jwt" (the draft forbids shared secrets; RFC 7591's
//     default, client_secret_basic, is refused too);
//   - with private_key_jwt, a jwks_uri (https), fetched the same way: a
//     JWK set of public keys only, at least one; the assertions of the
//     client verify against it (assertion.go); a kid it lacks makes the
//     peer fetch it once more (key rotation).
//
// The client is then a web client of the example storage with the
// document's redirect URIs (the provider compares the authorization
// request's redirect_uri with them exactly) and the document's method.
// Every fetch is recorded ([Peer.Documents]) with the reason of a
// refusal.

// MaxDocumentBytes caps a fetched metadata document or JWK set.
const MaxDocumentBytes = 64 << 10

// DocumentFetch is one GET of a client's metadata document or of its
// jwks_uri.
type DocumentFetch struct {
	URL string
	// Status is the HTTP status (0 when the request failed).
	Status int
	// Err is why the document (or key set) was refused; "" when it was
	// accepted.
	Err string
}

// Documents are the peer's fetches of metadata documents and key sets,
// in order.
func (p *Peer) Documents() []DocumentFetch {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]DocumentFetch(nil), p.fetches...)
}

// clientDocument is the part of a metadata document the peer reads.
type clientDocument struct {
	ClientID                string          `json:"client_id"`
	RedirectURIs            []string        `json:"redirect_uris"`
	GrantTypes              []string        `json:"grant_types"`
	TokenEndpointAuthMethod *string         `json:"token_endpoint_auth_method"`
	JWKSURI                 string          `json:"jwks_uri"`
	JWKS                    json.RawMessage `json:"jwks"`
	ClientSecret            *string         `json:"client_secret"`
}

// document is an accepted metadata document.
type document struct {
	client  op.Client
	jwksURI string
	keys    jose.JSONWebKeySet
}

// documents fetches and keeps the accepted metadata documents.
type documents struct {
	p      *Peer
	client *http.Client

	mu   sync.Mutex
	docs map[string]*document
}

func newDocuments(p *Peer, c *http.Client) *documents {
	hc := &http.Client{Timeout: 10 * time.Second}
	if c != nil {
		cp := *c
		hc = &cp
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &documents{p: p, client: hc, docs: map[string]*document{}}
}

// isDocumentURL reports whether a client id is meant as a metadata
// document's URL (it is checked as one when fetched).
func isDocumentURL(id string) bool { return strings.HasPrefix(id, "https://") }

// checkDocumentURL is the draft's rule for a client id URL.
func checkDocumentURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return err
	case u.Scheme != "https" || u.Host == "" || u.Opaque != "":
		return errors.New("not an https URL with a host")
	case u.User != nil:
		return errors.New("user info")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return errors.New("a fragment")
	case u.Path == "" || u.Path == "/":
		return errors.New("no path")
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return errors.New("a dot segment")
		}
	}
	return nil
}

// get fetches raw as JSON into v and records the fetch; check, when set,
// judges the decoded value.
func (d *documents) get(ctx context.Context, raw string, v any, check func() error) error {
	rec := DocumentFetch{URL: raw}
	err := func() error {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := d.client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		rec.Status = resp.StatusCode
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, MaxDocumentBytes+1))
		if err != nil {
			return err
		}
		if len(body) > MaxDocumentBytes {
			return errors.New("larger than 64 KiB")
		}
		if err := json.Unmarshal(body, v); err != nil {
			return fmt.Errorf("not a JSON object: %w", err)
		}
		if check != nil {
			return check()
		}
		return nil
	}()
	if err != nil {
		rec.Err = err.Error()
	}
	d.p.mu.Lock()
	d.p.fetches = append(d.p.fetches, rec)
	d.p.mu.Unlock()
	return err
}

// load is the accepted document of id, fetched the first time.
func (d *documents) load(ctx context.Context, id string) (*document, error) {
	d.mu.Lock()
	doc, ok := d.docs[id]
	d.mu.Unlock()
	if ok {
		return doc, nil
	}
	if err := checkDocumentURL(id); err != nil {
		rec := DocumentFetch{URL: id, Err: "client id URL: " + err.Error()}
		d.p.mu.Lock()
		d.p.fetches = append(d.p.fetches, rec)
		d.p.mu.Unlock()
		return nil, err
	}
	var m clientDocument
	var method oidc.AuthMethod
	err := d.get(ctx, id, &m, func() error {
		switch {
		case m.ClientID != id:
			return fmt.Errorf("client_id %q is not the document's URL", m.ClientID)
		case len(m.RedirectURIs) == 0:
			return errors.New("no redirect_uris")
		case m.ClientSecret != nil:
			return errors.New("a client_secret")
		case m.GrantTypes != nil && !slices.Contains(m.GrantTypes, "authorization_code"):
			return errors.New("grant_types without authorization_code")
		case m.TokenEndpointAuthMethod == nil:
			return errors.New("no token_endpoint_auth_method (the default, client_secret_basic, needs a shared secret)")
		}
		for _, r := range m.RedirectURIs {
			if u, err := url.Parse(r); err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" {
				return fmt.Errorf("redirect URI %q is not an absolute URL", r)
			}
		}
		switch oidc.AuthMethod(*m.TokenEndpointAuthMethod) {
		case oidc.AuthMethodNone:
			method = oidc.AuthMethodNone
			if m.JWKSURI != "" || len(m.JWKS) > 0 {
				return errors.New("keys for a public client")
			}
		case oidc.AuthMethodPrivateKeyJWT:
			method = oidc.AuthMethodPrivateKeyJWT
			if u, err := url.Parse(m.JWKSURI); err != nil || u.Scheme != "https" || u.Host == "" {
				return errors.New("private_key_jwt without an https jwks_uri")
			}
		default:
			return fmt.Errorf("token_endpoint_auth_method %q: only none and private_key_jwt", *m.TokenEndpointAuthMethod)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	doc = &document{
		client:  methodClient{Client: storage.WebClient(id, "", m.RedirectURIs...), method: method},
		jwksURI: m.JWKSURI,
	}
	if method == oidc.AuthMethodPrivateKeyJWT {
		if doc.keys, err = d.keySet(ctx, m.JWKSURI); err != nil {
			return nil, err
		}
	}
	d.mu.Lock()
	d.docs[id] = doc
	d.mu.Unlock()
	return doc, nil
}

// keySet fetches a client's JWK set: public keys only, at least one.
func (d *documents) keySet(ctx context.Context, raw string) (jose.JSONWebKeySet, error) {
	var set jose.JSONWebKeySet
	err := d.get(ctx, raw, &set, func() error {
		if len(set.Keys) == 0 {
			return errors.New("no keys")
		}
		for _, k := range set.Keys {
			if !k.IsPublic() {
				return errors.New("a private key")
			}
		}
		return nil
	})
	return set, err
}

// key is the key kid of the document id's client; a kid its JWK set
// lacks makes the peer fetch the set once more.
func (d *documents) key(ctx context.Context, id, kid string) (*jose.JSONWebKey, error) {
	doc, err := d.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if doc.jwksURI == "" {
		return nil, errors.New("the client's document names no jwks_uri (token_endpoint_auth_method none)")
	}
	d.mu.Lock()
	set := doc.keys
	d.mu.Unlock()
	if len(set.Key(kid)) == 0 {
		if set, err = d.keySet(ctx, doc.jwksURI); err != nil {
			return nil, err
		}
		d.mu.Lock()
		doc.keys = set
		d.mu.Unlock()
	}
	return keyOf(set, kid)
}
