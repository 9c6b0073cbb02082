package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/ports"
	"github.com/rs/xid"
	"github.com/rs/zerolog"
)

type panicRoutes struct{}

func (panicRoutes) register(rt *router) {
	rt.handle("GET /v1/panic", "", func(r *http.Request, p ports.Principal) (int, any, error) {
		panic("secret-in-panic " + r.Header.Get("Authorization"))
	})
	rt.handle("POST /v1/echo", "", func(r *http.Request, p ports.Principal) (int, any, error) {
		var body map[string]any
		if err := rt.decode(r, &body, 0); err != nil {
			return 0, nil, err
		}
		return http.StatusOK, map[string]string{"ok": "yes"}, nil
	})
}

type oneToken struct{}

const mwToken = "clt_request-log-canary-token"

func (oneToken) Handle(_ context.Context, q accounts.Authenticate) (ports.Principal, error) {
	token := q.Token
	if token != mwToken {
		return ports.Principal{}, ports.ErrNotFound
	}
	return ports.Principal{TokenID: "tok1", TenantID: "aaaaaaaa-0000-4000-8000-000000000001"}, nil
}

type okReady struct{}

func (okReady) Ping(context.Context) error { return nil }

func newLoggedServer(t *testing.T) (*httptest.Server, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	log := zerolog.New(&logs)
	srv := NewServer("127.0.0.1:0", log, okReady{}, oneToken{}, app.Gates{}, netpolicy.TrustedProxies{}, []Routes{panicRoutes{}}, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts, &logs
}

func doReq(t *testing.T, ts *httptest.Server, method, path, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+mwToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestPanicIsALogged500AndTheServerKeepsServing(t *testing.T) {
	ts, logs := newLoggedServer(t)
	resp := doReq(t, ts, "GET", "/v1/panic", "")
	var body errorBody
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 500 || body.Error.Code != "internal" {
		t.Fatalf("panic answered %d %+v (%v), want 500 internal", resp.StatusCode, body, err)
	}
	if !strings.Contains(logs.String(), `"message":"handler panicked"`) || !strings.Contains(logs.String(), `"panic_type":"string"`) {
		t.Errorf("no panic log line:\n%s", logs.String())
	}
	// The panic line and the access line carry the id the client got.
	id := resp.Header.Get("X-Request-Id")
	if id == "" || strings.Count(logs.String(), `"request_id":"`+id+`"`) != 2 {
		t.Errorf("X-Request-Id %q is not on both the panic and the request line:\n%s", id, logs.String())
	}
	if strings.Contains(logs.String(), "secret-in-panic") {
		t.Errorf("the panic value reached the log:\n%s", logs.String())
	}
	if resp := doReq(t, ts, "GET", "/healthz", ""); resp.StatusCode != 200 {
		t.Errorf("after a panic /healthz = %d", resp.StatusCode)
	}
}

// TestRequestLogHasNoSecrets: one line per request with method, route,
// status, duration, tenant and request id; never the token, the
// Authorization header or the body.
func TestRequestLogHasNoSecrets(t *testing.T) {
	ts, logs := newLoggedServer(t)
	const bodyCanary = "body-canary-value"
	doReq(t, ts, "POST", "/v1/echo?q=query-canary", `{"password": "`+bodyCanary+`"}`)
	doReq(t, ts, "POST", "/v1/echo", `{"broken": `+bodyCanary)
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", l)
		}
		if m["message"] == "request" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("request log lines = %d, want 2:\n%s", len(lines), logs.String())
	}
	for _, m := range lines {
		for _, k := range []string{"method", "route", "status", "duration", "tenant_id", "request_id"} {
			if _, ok := m[k]; !ok {
				t.Errorf("request line lacks %q: %v", k, m)
			}
		}
		if m["route"] != "POST /v1/echo" || m["tenant_id"] != "aaaaaaaa-0000-4000-8000-000000000001" {
			t.Errorf("request line = %v", m)
		}
	}
	for _, canary := range []string{mwToken, "Bearer", bodyCanary, "query-canary", "password"} {
		if strings.Contains(logs.String(), canary) {
			t.Errorf("the log contains %q:\n%s", canary, logs.String())
		}
	}
}

// TestRequestIDsAreRandom: the X-Request-Id is not hlog's default xid,
// whose first four bytes are the time and whose rest is a machine hash,
// the process id and a counter; two requests in the same second would
// share the time and the machine and process parts.
func TestRequestIDsAreRandom(t *testing.T) {
	ts, _ := newLoggedServer(t)
	var ids []xid.ID
	for range 2 {
		h := doReq(t, ts, "GET", "/healthz", "").Header.Get("X-Request-Id")
		id, err := xid.FromString(h)
		if err != nil {
			t.Fatalf("X-Request-Id %q: %v", h, err)
		}
		ids = append(ids, id)
	}
	if bytes.Equal(ids[0][:4], ids[1][:4]) || ids[0].Pid() == ids[1].Pid() {
		t.Errorf("request ids %s and %s share their time or process part: not random", ids[0], ids[1])
	}
}
