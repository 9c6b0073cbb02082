package mcpclient

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestTLSFrontRewrites proves the conformance client's TLS terminators
// (conformance_front_test.go): through a terminator, the client sees only
// https URLs of terminators and the server only its own http URLs, in
// headers, bodies and query strings, plain and URL-encoded; nothing else
// is touched.
func TestTLSFrontRewrites(t *testing.T) {
	var seen struct {
		query, body string
	}
	var self string // the upstream's http origin
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen.query, seen.body = r.URL.RawQuery, string(b)
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+self+`/.well-known/oauth-protected-resource/mcp"`)
		w.Header().Set("Location", "https://localhost/oauth/callback?code=c&iss="+url.QueryEscape(self))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"resource":"%s/mcp","other":"https://evil.example.com","near":"http://localhost.evil:1/x"}`, self)
	}))
	defer upstream.Close()
	_, upPort, _ := net.SplitHostPort(upstream.Listener.Addr().String())
	self = "http://localhost:" + upPort

	pool, leaf, err := newLocalhostPKI()
	if err != nil {
		t.Fatal(err)
	}
	f := newTLSFront(leaf, zerolog.Nop())
	defer f.close()
	port, err := f.front(upPort)
	if err != nil {
		t.Fatal(err)
	}
	front := "https://localhost:" + port
	hc := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer hc.CloseIdleConnections()

	form := url.Values{"resource": {front + "/mcp"}, "redirect_uri": {"https://localhost/oauth/callback"}, "other": {"https://localhost:1/x"}}
	q := url.Values{"resource": {front + "/mcp"}, "iss": {"https://evil.example.com"}}
	resp, err := hc.Post(front+"/token?"+q.Encode(), "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()

	sq, _ := url.ParseQuery(seen.query)
	sf, _ := url.ParseQuery(seen.body)
	cases := []struct {
		what      string
		got, want string
	}{
		{"query resource to the server", sq.Get("resource"), self + "/mcp"},
		{"query: another https URL untouched", sq.Get("iss"), "https://evil.example.com"},
		{"form resource to the server", sf.Get("resource"), self + "/mcp"},
		{"form: the client's redirect URI untouched", sf.Get("redirect_uri"), "https://localhost/oauth/callback"},
		{"form: a loopback https URL of no terminator untouched", sf.Get("other"), "https://localhost:1/x"},
		{"WWW-Authenticate to the client", resp.Header.Get("WWW-Authenticate"), `Bearer resource_metadata="` + front + `/.well-known/oauth-protected-resource/mcp"`},
		{"Location's encoded iss to the client", resp.Header.Get("Location"), "https://localhost/oauth/callback?code=c&iss=" + url.QueryEscape(front)},
		{"JSON body to the client", string(body), `{"resource":"` + front + `/mcp","other":"https://evil.example.com","near":"http://localhost.evil:1/x"}`},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.what, c.got, c.want)
		}
	}

	// Pure rewrites: a port that is a prefix of another is not confused,
	// and a new origin gets its own terminator.
	other := f.toClient("http://localhost:" + upPort + "0/x")
	if !strings.HasPrefix(other, "https://localhost:") || strings.Contains(other, front+"0") || other == front+"/x" {
		t.Errorf("another origin rewritten as %q", other)
	}
	if got := f.toServer(strings.Replace(other, "https", "http", 1)); got != strings.Replace(other, "https", "http", 1) {
		t.Errorf("an http URL sent by the client was rewritten: %q", got)
	}
	if got := f.toServer(front + "0/x"); got != front+"0/x" {
		t.Errorf("a longer port was taken for the terminator's: %q", got)
	}
	if got := f.toServer(strings.ToLower(url.QueryEscape(front))); got != strings.ToLower(url.QueryEscape(self)) && got != url.QueryEscape(self) {
		t.Errorf("lower-case URL encoding not rewritten: %q", got)
	}
}
