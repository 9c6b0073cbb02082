package main

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/codelotse/codelotse/adapters/auditsink"
	"github.com/codelotse/codelotse/adapters/config"
	"github.com/codelotse/codelotse/adapters/crypto"
	"github.com/codelotse/codelotse/adapters/httpapi"
	"github.com/codelotse/codelotse/adapters/llm/openai"
	"github.com/codelotse/codelotse/adapters/llm/scripted"
	"github.com/codelotse/codelotse/adapters/mcpclient"
	"github.com/codelotse/codelotse/adapters/metrics"
	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/secrets"
	"github.com/codelotse/codelotse/adapters/web"
	"github.com/codelotse/codelotse/adapters/worker"
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/app/operations"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/app/repositories"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
	"github.com/google/uuid"
	"github.com/google/wire"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/rs/zerolog"
)

// databaseSet opens the database for the service: it refuses to start when
// the tenant role could bypass row-level security.
var databaseSet = wire.NewSet(provideServiceDB, postgres.ProviderSet, wire.Bind(new(ports.Readiness), new(*postgres.DB)))

func provideServiceDB(ctx context.Context, cfg config.Config) (*postgres.DB, func(), error) {
	db, cleanup, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, nil, err
	}
	if err := db.CheckTenantRole(ctx); err != nil {
		cleanup()
		return nil, nil, err
	}
	if cfg.AuditWebhook.On() {
		db.StreamAudit()
	}
	return db, cleanup, nil
}

// provideMigrationDB opens the database as the migrating role; the tenant
// role may not exist yet.
func provideMigrationDB(ctx context.Context, cfg config.Config) (*postgres.DB, func(), error) {
	return postgres.Open(ctx, cfg.DatabaseURL)
}

// cipherSet is the credential key ring from QUAVON_ENCRYPTION_KEYS, and
// the Vault the application modules hold it in.
var cipherSet = wire.NewSet(provideKeyRing, wire.Bind(new(ports.Cipher), new(*crypto.KeyRing)), app.NewVault)

func provideKeyRing(cfg config.Config) (*crypto.KeyRing, error) {
	keys := make([]crypto.Key, len(cfg.Keys))
	for i, k := range cfg.Keys {
		keys[i] = crypto.Key{ID: k.ID, Secret: k.Secret}
	}
	return crypto.NewKeyRing(keys)
}

func provideGates(cfg config.Config) app.Gates { return app.NewGates(cfg.Instance, cfg.Edition) }

// provideTrustedProxies are the proxies whose X-Forwarded-For names the
// client of an API request or a web sign-in (QUAVON_TRUSTED_PROXIES).
func provideTrustedProxies(cfg config.Config) netpolicy.TrustedProxies { return cfg.TrustedProxies }

func provideRules(cfg config.Config) netpolicy.Rules {
	return netpolicy.NewRules(cfg.Edition, cfg.PrivateHosts)
}

func provideResolver() ports.Resolver { return net.DefaultResolver }

// systemClock is the wall clock at PostgreSQL's precision (microseconds),
// so a time answered after a write is the time every later read answers.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func provideClock() ports.Clock { return systemClock{} }

func provideNewID() ports.NewID { return uuid.NewString }

func provideHTTPAddr(cfg config.Config) httpapi.Addr { return httpapi.Addr(cfg.HTTPAddr) }

// metricsSet is the process's one metrics registry.
var metricsSet = wire.NewSet(metrics.New, wire.Bind(new(ports.Metrics), new(*metrics.Registry)),
	wire.Bind(new(ports.RetentionMetrics), new(*metrics.Registry)), wire.Bind(new(ports.RecheckMetrics), new(*metrics.Registry)),
	wire.Bind(new(httpapi.HTTPMetrics), new(*metrics.Registry)),
	wire.Bind(new(mcpclient.OperationMetrics), new(*metrics.Registry)), wire.Bind(new(worker.Metrics), new(*metrics.Registry)),
	provideMetricsHandler)

func provideMetricsHandler(r *metrics.Registry) httpapi.MetricsHandler { return r.Handler() }

// provideModel is the model endpoint of QUAVON_LLM_PROVIDER. An openai
// provider without QUAVON_LLM_BASE_URL is not an error at startup (make
// run needs no configuration): reviews then fail with one clear reason.
func provideModel(cfg config.Config, log zerolog.Logger) (ports.Model, error) {
	if cfg.LLM.Provider == "scripted" {
		return scripted.New(cfg.LLM.Script, cfg.LLM.ScriptLog)
	}
	if cfg.LLM.BaseURL == "" {
		log.Warn().Msg("QUAVON_LLM_BASE_URL is not set: reviews will fail until a model endpoint is configured")
		return unconfiguredModel{}, nil
	}
	return openai.New(openai.Options{BaseURL: cfg.LLM.BaseURL, APIKey: cfg.LLM.APIKey, Model: cfg.LLM.Model})
}

// unconfiguredModel answers every request with the missing setting.
type unconfiguredModel struct{}

func (unconfiguredModel) Complete(context.Context, ports.ModelRequest) (ports.ModelResponse, error) {
	return ports.ModelResponse{}, errors.New("no model endpoint: set QUAVON_LLM_BASE_URL and QUAVON_LLM_MODEL, or QUAVON_LLM_PROVIDER=scripted")
}

// scannerSet is the secret scanner.
var scannerSet = wire.NewSet(secrets.New, wire.Bind(new(ports.SecretScanner), new(*secrets.Scanner)))

func provideWarn(log zerolog.Logger) ports.Warn {
	return func(msg string, fields map[string]string) {
		ev := log.Warn()
		for k, v := range fields {
			ev = ev.Str(k, v)
		}
		ev.Msg(msg)
	}
}

func provideRand() ports.Random { return rand.Reader }

// reviewSet runs reviews: the use case and the worker adapter on the
// shared pool.
var reviewSet = wire.NewSet(
	provideModel, provideWarn,
	reviews.RunnerSet, wire.Bind(new(worker.ReviewHandler), new(*reviews.ReviewRunner)),
	providePool, provideWorkerOptions, worker.ProviderSet,
	operations.ProviderSet, registry.RecheckSet, provideAuditStream,
)

// provideAuditStream is the audit stream's job when
// QUAVON_AUDIT_WEBHOOK_URL is set, else nil. The worker that runs it
// exports the outbox's backlog.
func provideAuditStream(cfg config.Config, outbox ports.AuditOutbox, c *mcpclient.Connector, m *metrics.Registry,
	clock ports.Clock, warn ports.Warn) *operations.AuditStreamJob {
	w := cfg.AuditWebhook
	if !w.On() {
		return nil
	}
	m.ObserveAuditOutbox(outbox.Backlog)
	sink := auditsink.NewWebhook(w.URL, w.Key, c, time.Now)
	return operations.NewAuditStreamJob(outbox, sink, m, clock, warn)
}

func providePool(db *postgres.DB) *pgxpool.Pool { return db.Pool() }

func provideWorkerOptions(retention *operations.RetentionJob, recheck *registry.RecheckJob, stream *operations.AuditStreamJob,
	m worker.Metrics, cfg config.Config) worker.Options {
	o := worker.Options{Retention: retention, Recheck: recheck, RecheckInterval: cfg.RecheckInterval, Metrics: m, Workers: cfg.WorkerConcurrency}
	if stream != nil {
		o.AuditStream = stream
	}
	return o
}

// accountCommands are the operator's commands on tenants and tokens; they
// need the database, the clock and randomness, no key ring.
type accountCommands struct {
	CreateTenant *accounts.CreateTenantHandler
	CreateToken  *accounts.CreateTokenHandler
	ListTokens   *accounts.ListTokensHandler
	RevokeToken  *accounts.RevokeTokenHandler
}

// service is what `codelotse serve` runs: the API and the worker; and
// what `codelotse worker` runs: the worker with a probe server (health,
// readiness and the worker's metrics, no API).
type service struct {
	API    *httpapi.Server
	Worker *worker.Worker
}

// provideProbeServer serves only /healthz, /readyz and /metrics.
func provideProbeServer(addr httpapi.Addr, log zerolog.Logger, ready ports.Readiness, gates app.Gates, m *httpapi.MetricsRoutes, hm httpapi.HTTPMetrics) *httpapi.Server {
	return httpapi.NewServer(addr, log, ready, nil, gates, netpolicy.TrustedProxies{}, []httpapi.Routes{m}, hm)
}

// provideAuthLimiter counts failed authentications of this process
// (QUAVON_AUTH_FAILURE_LIMIT per client address and minute).
func provideAuthLimiter(cfg config.Config, clock ports.Clock) *accounts.AuthLimiter {
	return accounts.NewAuthLimiterWith(clock, cfg.AuthFailureLimit)
}

// baseSet holds what every process shares: gates, address rules, the
// resolver, and the three sources of what differs between two runs, each
// injected the same way into every use case: the clock (ports.Clock), new
// ids (ports.NewID) and randomness (ports.Random).
var baseSet = wire.NewSet(provideGates, provideRules, provideTrustedProxies, provideResolver, provideClock, provideNewID, provideRand, provideCallCap, scannerSet)

// provideCallCap is the instance's cap of a server's calls-per-minute
// limit (QUAVON_MCP_MAX_CALLS_PER_MINUTE), which the registration checks
// and every review's call is held to.
func provideCallCap(cfg config.Config) server.CallCap { return cfg.CallCap }

// appSet builds every use case the API serves, module by module.
var appSet = wire.NewSet(
	app.ProviderSet, registry.ProviderSet, repositories.ProviderSet,
	accounts.ProviderSet, reviews.ProviderSet, provideAuthLimiter,
)

// connectorSet is the guarded MCP transport, as the application holds
// it: behind the operator's allowlist of URLs; its token requests sign
// private_key_jwt assertions with the instance's signing keys.
var connectorSet = wire.NewSet(provideConnectorOptions, mcpclient.NewConnector, provideAllowedURLs, provideMCPConnector, provideSigningRing, provideClientAssertions)

// provideAllowedURLs is the operator's allowlist of MCP server URLs
// (QUAVON_MCP_ALLOWED_URLS; empty: any URL), which the registration, the
// discovery, the connection tests and the OAuth connection check and
// the server views' status reads.
func provideAllowedURLs(cfg config.Config) server.AllowedURLs { return cfg.AllowedURLs }

// provideMCPConnector is the one MCP connector of the application
// modules (reviews, discovery, connection tests): the guarded transport
// behind the allowlist, so no connection reaches a URL it leaves out.
func provideMCPConnector(c *mcpclient.Connector, allowed server.AllowedURLs) ports.MCPConnector {
	return app.AllowlistedConnector(c, allowed)
}

func provideConnectorOptions(cfg config.Config, rules netpolicy.Rules, resolver ports.Resolver, log zerolog.Logger, m mcpclient.OperationMetrics,
	assertions ports.ClientAssertions) (mcpclient.Options, error) {
	roots, err := rootCAs()
	if err != nil {
		return mcpclient.Options{}, err
	}
	return mcpclient.Options{Rules: rules, Resolver: resolver, Timeout: cfg.CallTimeout, RootCAs: roots, Logger: log, Metrics: m, Assertions: assertions}, nil
}

// provideSigningRing is the ring of QUAVON_OAUTH_SIGNING_KEYS (the first
// key signs, every key is published), built once for the connector and
// the published JWKS; nil when none is set.
func provideSigningRing(cfg config.Config) (*crypto.SigningRing, error) {
	if len(cfg.OAuthSigningKeys) == 0 {
		return nil, nil
	}
	keys := make([]crypto.SigningKey, len(cfg.OAuthSigningKeys))
	for i, k := range cfg.OAuthSigningKeys {
		keys[i] = crypto.SigningKey{ID: k.ID, Key: k.Key}
	}
	return crypto.NewSigningRing(keys, time.Now)
}

// provideClientAssertions is the signer of private_key_jwt client
// assertions: the signing ring, or a nil interface (not a typed nil)
// when QUAVON_OAUTH_SIGNING_KEYS is not set, so `Assertions == nil`
// means the instance has no signing key.
func provideClientAssertions(r *crypto.SigningRing) ports.ClientAssertions {
	if r == nil {
		return nil
	}
	return r
}

// provideOAuthPublic is what the API publishes for authorization servers
// (GET /oauth/client-metadata.json and GET /oauth/jwks.json, only on an
// https QUAVON_PUBLIC_URL): the public URL and the signing ring's JWK set
// (empty without signing keys).
func provideOAuthPublic(cfg config.Config, r *crypto.SigningRing) httpapi.OAuthPublic {
	return httpapi.OAuthPublic{PublicURL: cfg.PublicURL, JWKS: r.JWKS()}
}

// rootCAs is the system pool plus the CA file SSL_CERT_FILE names, so the
// variable adds to the system's trust rather than replacing it.
func rootCAs() (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	if file := os.Getenv("SSL_CERT_FILE"); file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("SSL_CERT_FILE: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("SSL_CERT_FILE: no PEM certificate in the file")
		}
	}
	return pool, nil
}

// uiSet is the web interface under /ui/, on the API's use cases.
var uiSet = wire.NewSet(web.ProviderSet, providePublicURL, provideUIHandler)

func providePublicURL(cfg config.Config) web.PublicURL { return web.PublicURL(cfg.PublicURL) }

func provideUIHandler(u *web.UI) httpapi.UIHandler { return u }

// oauthSet is the OAuth client of the code-flow connection, the
// operator's list of issuers that may register clients dynamically, and
// what the instance publishes for authorization servers.
var oauthSet = wire.NewSet(provideOAuthClient, provideDCRIssuers, provideClientDocument, provideOAuthPublic)

func provideDCRIssuers(cfg config.Config) registry.DCRIssuers {
	return registry.DCRIssuers(cfg.OAuthDCRIssuers)
}

// provideOAuthClient is the guarded OAuth client of the code-flow
// connection: the connector's options, so its requests obey the same
// address rules, CAs, timeout and logger as every MCP connection.
func provideOAuthClient(opts mcpclient.Options) ports.OAuthClient {
	return mcpclient.NewOAuthClient(opts)
}

// provideClientDocument is the instance's client ID metadata document as
// the code-flow connection uses it: its URL under an https
// QUAVON_PUBLIC_URL (none otherwise), and whether its client signs
// (QUAVON_OAUTH_SIGNING_KEYS).
func provideClientDocument(cfg config.Config) registry.ClientDocument {
	u, _ := server.ClientMetadataURL(cfg.PublicURL)
	return registry.ClientDocument{URL: u, Signs: len(cfg.OAuthSigningKeys) > 0}
}
