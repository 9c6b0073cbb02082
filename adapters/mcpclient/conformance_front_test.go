package mcpclient

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// tlsFront puts a TLS terminator on 127.0.0.1 in front of every plain-HTTP
// loopback origin a scenario uses (docs/conformance.md, "The TLS
// terminators"). The suite's servers (the MCP server, and for the auth
// scenarios an authorization server on a port of its own) speak http on
// http://localhost:<port> and name those URLs in their answers; the
// connector and the OAuth client speak https only. So each terminator
// rewrites between the two views of the same URL, in both directions:
//
//   - in answers (every header value, e.g. WWW-Authenticate's
//     resource_metadata and Location, and every body but an event
//     stream), http://localhost:<port> becomes https://localhost:<tls
//     port>, also URL-encoded (the iss of a redirect's query); an origin
//     seen there for the first time gets its own terminator then;
//   - in requests (the query string and a form or JSON body: resource,
//     redirect_uri, ...), https://localhost:<tls port> of a terminator
//     becomes the http origin behind it, also URL-encoded.
//
// The scenario's checks thus see their own http URLs and the client sees
// https only. The rewrite is exact and reversible: nothing else is
// touched, and an https URL that is not a terminator's (the client's
// redirect URI, https://evil.example.com) passes as it is.
type tlsFront struct {
	leaf   tls.Certificate
	logger zerolog.Logger

	mu sync.Mutex
	// toTLS maps an upstream port to its terminator's port; toHTTP the
	// other way round.
	toTLS, toHTTP map[string]string
	stops         []func()
}

func newTLSFront(leaf tls.Certificate, logger zerolog.Logger) *tlsFront {
	return &tlsFront{leaf: leaf, logger: logger, toTLS: map[string]string{}, toHTTP: map[string]string{}}
}

var (
	// The http origins of the suite's servers, plain and URL-encoded.
	httpOrigin        = regexp.MustCompile(`http://localhost:([0-9]+)`)
	httpOriginEncoded = regexp.MustCompile(`(?i)http%3A%2F%2Flocalhost%3A([0-9]+)`)
	// The https origins the client sees, plain and URL-encoded.
	httpsOrigin        = regexp.MustCompile(`https://localhost:([0-9]+)`)
	httpsOriginEncoded = regexp.MustCompile(`(?i)https%3A%2F%2Flocalhost%3A([0-9]+)`)
)

// front returns the port of the terminator in front of
// http://localhost:<upstreamPort>, starting it on first use.
func (f *tlsFront) front(upstreamPort string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.toTLS[upstreamPort]; ok {
		return p, nil
	}
	upstream := &url.URL{Scheme: "http", Host: "localhost:" + upstreamPort}
	port, stop, err := f.serve(upstream)
	if err != nil {
		return "", err
	}
	p := fmt.Sprint(port)
	f.toTLS[upstreamPort], f.toHTTP[p] = p, upstreamPort
	f.stops = append(f.stops, stop)
	f.logger.Debug().Str("upstream", upstream.String()).Int("port", port).Msg("tls terminator")
	return p, nil
}

func (f *tlsFront) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, stop := range f.stops {
		stop()
	}
	f.stops = nil
}

// toClient rewrites what a server says into the client's view: every
// http://localhost:<port> (plain or URL-encoded) into the https origin of
// its terminator, started on first sight.
func (f *tlsFront) toClient(s string) string {
	rewrite := func(re *regexp.Regexp, format string) {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			p, err := f.front(re.FindStringSubmatch(m)[1])
			if err != nil {
				f.logger.Warn().Err(err).Msg("tls terminator")
				return m
			}
			return fmt.Sprintf(format, p)
		})
	}
	rewrite(httpOrigin, "https://localhost:%s")
	rewrite(httpOriginEncoded, "https%%3A%%2F%%2Flocalhost%%3A%s")
	return s
}

// toServer rewrites what the client sends into the server's view: the
// https origin of a terminator (plain or URL-encoded) into the http origin
// behind it. Any other https URL is left alone.
func (f *tlsFront) toServer(s string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	rewrite := func(re *regexp.Regexp, format string) {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			up, ok := f.toHTTP[re.FindStringSubmatch(m)[1]]
			if !ok {
				return m
			}
			return fmt.Sprintf(format, up)
		})
	}
	rewrite(httpsOrigin, "http://localhost:%s")
	rewrite(httpsOriginEncoded, "http%%3A%%2F%%2Flocalhost%%3A%s")
	return s
}

// maxRewrittenBody bounds the bodies a terminator reads to rewrite (the
// suite's metadata, token and MCP answers are a few KiB).
const maxRewrittenBody = 4 << 20

func (f *tlsFront) rewriteBody(body io.ReadCloser, fn func(string) string) (io.ReadCloser, int64, error) {
	b, err := io.ReadAll(io.LimitReader(body, maxRewrittenBody+1))
	_ = body.Close()
	if err != nil {
		return nil, 0, err
	}
	if len(b) > maxRewrittenBody {
		return nil, 0, fmt.Errorf("body over %d bytes", maxRewrittenBody)
	}
	out := []byte(fn(string(b)))
	return io.NopCloser(bytes.NewReader(out)), int64(len(out)), nil
}

// serve serves https on 127.0.0.1 in front of upstream until stop is
// called, rewriting as tlsFront says and logging each request.
func (f *tlsFront) serve(upstream *url.URL) (port int, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
	}
	logger := f.logger
	tr := &http.Transport{Proxy: nil, DisableCompression: true}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			out := pr.Out
			out.URL.RawQuery = f.toServer(out.URL.RawQuery)
			ct := out.Header.Get("Content-Type")
			if out.Body != nil && out.Body != http.NoBody && (strings.Contains(ct, "json") || strings.Contains(ct, "x-www-form-urlencoded")) {
				body, n, err := f.rewriteBody(out.Body, f.toServer)
				if err != nil {
					logger.Warn().Err(err).Msg("proxy: request body")
					body, n = io.NopCloser(strings.NewReader("")), 0
				}
				out.Body, out.ContentLength = body, n
				out.Header.Del("Transfer-Encoding")
				out.Header.Set("Content-Length", fmt.Sprint(n))
			}
		},
		Transport:     tr,
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			logger.Warn().Err(err).Str("method", r.Method).Str("mcpMethod", r.Header.Get("Mcp-Method")).Msg("proxy: upstream failed")
			w.WriteHeader(http.StatusBadGateway)
		},
		ModifyResponse: func(resp *http.Response) error {
			logger.Debug().Str("method", resp.Request.Method).Str("path", resp.Request.URL.Path).
				Str("mcpMethod", resp.Request.Header.Get("Mcp-Method")).Int("status", resp.StatusCode).Msg("proxied")
			for k, vs := range resp.Header {
				for i, v := range vs {
					vs[i] = f.toClient(v)
				}
				resp.Header[k] = vs
			}
			if strings.Contains(resp.Header.Get("Content-Type"), "text/event-stream") || resp.Body == nil || resp.Body == http.NoBody {
				return nil // streamed as it comes
			}
			body, n, err := f.rewriteBody(resp.Body, f.toClient)
			if err != nil {
				return err
			}
			resp.Body, resp.ContentLength = body, n
			resp.Header.Del("Transfer-Encoding")
			resp.Header.Set("Content-Length", fmt.Sprint(n))
			return nil
		},
	}
	srv := &http.Server{
		Handler:           rp,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{f.leaf}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	return ln.Addr().(*net.TCPAddr).Port, func() {
		_ = srv.Close()
		tr.CloseIdleConnections()
	}, nil
}
