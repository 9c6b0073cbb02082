package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// The client under test of the MCP conformance suite (docs/conformance.md).
// The suite's runner starts a scenario server on http://localhost:<port>
// and runs its --command with that URL appended, the scenario's name in
// MCP_CONFORMANCE_SCENARIO, the protocol version in
// MCP_CONFORMANCE_PROTOCOL_VERSION and, for some scenarios, a JSON object
// in MCP_CONFORMANCE_CONTEXT. TestConformanceClientScenarios passes this
// test binary itself as the command, with conformanceClientEnv set, and
// TestMain then runs runConformanceClient instead of the tests.
//
// The client is the production path: a Connector with the guarded
// transport, OpenSession, ListTools, CallTool, Close. Only what a test
// must add is added, here and nowhere else: TLS terminators on loopback
// in front of the plain-HTTP scenario servers (the connector speaks https
// only; tlsFront in conformance_front_test.go) with a throwaway CA in
// Options.RootCAs, and netpolicy rules that list "localhost" as a private
// host (as a self-hosted operator would), resolved to 127.0.0.1 by a test
// resolver. For the auth/* scenarios, applyConformanceAuth
// (conformance_auth_test.go) obtains the credential first.
const conformanceClientEnv = "CODELOTSE_CONFORMANCE_CLIENT"

// conformanceContext is MCP_CONFORMANCE_CONTEXT: the scenario's name and
// scenario-specific data. The auth scenarios put their credentials here
// (docs/conformance.md, "Auth scenarios").
type conformanceContext struct {
	Name string `json:"name"`
	// ToolCalls: the calls a scenario asks for (http-custom-headers).
	ToolCalls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"toolCalls"`
	// The OAuth scenarios' data: auth/pre-registration and
	// auth/client-credentials-basic give client_id and client_secret;
	// auth/client-credentials-jwt gives client_id, private_key_pem and
	// signing_algorithm.
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
}

// runConformanceClient runs one scenario against the server URL, the last
// argument; it returns the process exit code (0: the client did what the
// scenario asks without an error).
func runConformanceClient(args []string) int {
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if scenario == "" || len(args) == 0 {
		fmt.Fprintln(os.Stderr, "conformance client: MCP_CONFORMANCE_SCENARIO and a server URL argument are required")
		return 2
	}
	logger := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, NoColor: true}).Level(zerolog.DebugLevel).With().Timestamp().Logger()
	negotiated, err := conformanceClient(scenario, args[len(args)-1], logger)
	code := 0
	if err != nil {
		fmt.Fprintf(os.Stderr, "conformance client: scenario %s: %v\n", scenario, err)
		code = 1
	}
	if dir := os.Getenv(conformanceOutcomesEnv); dir != "" {
		o := conformanceOutcome{Scenario: scenario, Protocol: os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"), Negotiated: negotiated, Exit: code}
		if err != nil {
			o.Error = err.Error()
		}
		b, _ := json.Marshal(o) // strings and an int: cannot fail
		if werr := os.WriteFile(filepath.Join(dir, outcomeFile(scenario)), b, 0o600); werr != nil {
			fmt.Fprintf(os.Stderr, "conformance client: outcome: %v\n", werr)
			return 2
		}
	}
	return code
}

// conformanceOutcomesEnv names a directory where the client writes its
// outcome (a conformanceOutcome) for the test to read: the suite's
// summary does not say whether the client exited cleanly.
const conformanceOutcomesEnv = "CODELOTSE_CONFORMANCE_OUTCOMES"

type conformanceOutcome struct {
	Scenario string `json:"scenario"`
	// Protocol is the version the runner asked for; Negotiated the one
	// the session speaks ("" if none opened).
	Protocol   string `json:"protocol"`
	Negotiated string `json:"negotiated"`
	Exit       int    `json:"exit"`
	Error      string `json:"error,omitempty"`
}

func outcomeFile(scenario string) string {
	return strings.ReplaceAll(scenario, "/", "_") + ".json"
}

func conformanceClient(scenario, rawURL string, logger zerolog.Logger) (negotiated string, _ error) {
	var cctx conformanceContext
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &cctx); err != nil {
			return negotiated, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	upstream, err := url.Parse(rawURL)
	if err != nil || upstream.Scheme != "http" {
		return negotiated, fmt.Errorf("server URL %q: want http://host:port/path", rawURL)
	}
	pool, leaf, err := newLocalhostPKI()
	if err != nil {
		return negotiated, err
	}
	if upstream.Hostname() != everythingHost || upstream.Port() == "" {
		return negotiated, fmt.Errorf("server URL %q: want http://%s:<port>/path", rawURL, everythingHost)
	}
	front := newTLSFront(leaf, logger)
	defer front.close()
	port, err := front.front(upstream.Port())
	if err != nil {
		return negotiated, err
	}

	ph, err := netpolicy.ParsePrivateHosts(everythingHost)
	if err != nil {
		return negotiated, err
	}
	opts := Options{
		Rules: netpolicy.NewRules(gate.SelfHosted, ph),
		Resolver: &resolver{fn: func(_ int64, host string) ([]netip.Addr, error) {
			if host == everythingHost {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}},
		Timeout: limits.CallTimeout,
		RootCAs: pool,
		Logger:  logger,
	}
	u, err := server.ParseURL(fmt.Sprintf("https://%s:%s%s", everythingHost, port, upstream.RequestURI()))
	if err != nil {
		return negotiated, err
	}
	target := ports.MCPTarget{URL: u, Credential: server.NoCredential()}
	if err := applyConformanceAuth(scenario, cctx, front, &opts, &target); err != nil {
		return negotiated, err
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := NewConnector(opts).OpenSession(ctx, target, limits.DiscoveryResponseCap)
	if err != nil {
		return negotiated, fmt.Errorf("OpenSession: %w", err)
	}
	defer s.Close()
	if ir := s.cs.InitializeResult(); ir != nil {
		negotiated = ir.ProtocolVersion
		logger.Info().Str("protocol", negotiated).Msg("session open")
	}
	listed, err := s.ListTools(ctx)
	if scenario == "auth/authorization-server-migration" && errors.Is(err, ports.ErrServerUnauthorized) {
		// The server moved to another authorization server after its
		// first request: an admin connects again (StartConnect obtains a
		// client at the new issuer) and a new session lists the tools.
		cred, cerr := conformanceConnect(ctx, NewOAuthClient(opts), cctx, opts, target.URL, target.Credential)
		if cerr != nil {
			return negotiated, fmt.Errorf("reconnect: %w", cerr)
		}
		target.Credential = cred
		s2, oerr := NewConnector(opts).OpenSession(ctx, target, limits.DiscoveryResponseCap)
		if oerr != nil {
			return negotiated, fmt.Errorf("OpenSession after reconnecting: %w", oerr)
		}
		defer s2.Close()
		s = s2
		listed, err = s.ListTools(ctx)
	}
	if err != nil {
		return negotiated, fmt.Errorf("ListTools: %w", err)
	}
	usable := map[string]ListedTool{}
	var first string
	for _, lt := range listed {
		if lt.Err != nil {
			logger.Info().Str("tool", lt.Name).Err(lt.Err).Msg("tool not usable")
			continue
		}
		if first == "" {
			first = lt.Name
		}
		usable[lt.Name] = lt
	}

	var errs []error
	call := func(name string, args json.RawMessage) {
		if args == nil {
			args = json.RawMessage("{}")
		}
		// The suite's arguments follow its tools' schemas, which need not
		// be the subset a review may call: sent as given.
		out, err := s.call(ctx, name, args)
		if err != nil {
			errs = append(errs, fmt.Errorf("CallTool(%s): %w", name, err))
			return
		}
		logger.Info().Str("tool", name).Bool("isError", out.IsError).Strs("texts", out.Texts).Msg("tool result")
	}
	switch {
	case len(cctx.ToolCalls) > 0:
		for _, tc := range cctx.ToolCalls {
			call(tc.Name, tc.Arguments)
		}
	case scenario == "json-schema-ref-no-deref":
		// Listing is the scenario: the $ref must not be fetched.
	case scenario == "json-schema-2020-12-preservation":
		focal, ok := usable["json_schema_2020_12_tool"]
		if !ok {
			return negotiated, errors.New("json_schema_2020_12_tool not listed or not usable")
		}
		args, err := json.Marshal(map[string]json.RawMessage{"schema": focal.Definition.InputSchema()})
		if err != nil {
			return negotiated, err
		}
		call("json_schema_echo", args)
	case scenario == "sse-retry":
		call("test_reconnection", nil)
	case scenario == "elicitation-sep1034-client-defaults":
		call("test_client_elicitation_defaults", nil)
	case scenario == "sep-2322-client-request-state":
		for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_no_result_type"} {
			call(name, nil)
		}
	case scenario == "http-invalid-tool-headers":
		// Every tool the connector accepted; it must have dropped the
		// invalid ones.
		for _, lt := range listed {
			if lt.Err == nil {
				call(lt.Name, nil)
			}
		}
	case strings.HasPrefix(scenario, "auth/"):
		call("test-tool", nil)
	default:
		// initialize, tools_call, http-standard-headers, request-metadata:
		// the first tool, with the arguments of the suite's own client.
		if first != "" {
			call(first, json.RawMessage(`{"a":2,"b":3}`))
		}
	}
	return negotiated, errors.Join(errs...)
}
