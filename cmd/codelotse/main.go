// Command codelotse is the CodeLotse MCP-context service: the admin REST
// API, the review worker and the operator commands (docs/operations.md,
// Commands).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/codelotse/codelotse/adapters/config"
	"github.com/codelotse/codelotse/adapters/logging"
	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/tracing"
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/app/operations"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `usage: codelotse <command>

commands:
  serve                                   admin REST API and review worker in one process
  api                                     the REST API alone
  worker                                  the review worker alone
  migrate                                 apply the database migrations
  tenants create --name NAME              create a tenant, print its id
  tokens create --tenant ID --permissions tenant:manage,repo:manage [--label TEXT] [--expires-in DURATION]
                                          create an API token, print it once
  tokens list --tenant ID                 list a tenant's tokens (never the secret)
  tokens revoke ID                        revoke a token at once (and its web sessions)
  keys rotate                             re-encrypt every credential under the primary key
  version                                 print version, protocol versions and sign-off
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprint(os.Stderr, usage)
		}
		fmt.Fprintln(os.Stderr, "codelotse: "+oneLine(err.Error()))
		os.Exit(1)
	}
}

// usageError is a bad command line; main prints the usage with it.
type usageError string

func (e usageError) Error() string { return string(e) }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// run dispatches a command line. It returns errors instead of exiting so
// tests can drive it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError("no command given")
	}
	cmd, rest := args[0], args[1:]
	if cmd == "version" {
		return printVersion(stdout)
	}
	if cmd == "help" || cmd == "-h" || cmd == "--help" {
		_, err := fmt.Fprint(stdout, usage)
		return err
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	log := logging.New(stderr, cfg.LogLevel)
	if cmd == "serve" || cmd == "api" || cmd == "worker" {
		stopTracing, err := tracing.Setup(ctx, getenv, version)
		if err != nil {
			return err
		}
		defer stopTracing()
	}
	switch cmd {
	case "serve":
		if err := noArgs(cmd, rest); err != nil {
			return err
		}
		svc, cleanup, err := initServe(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer cleanup()
		return runAll(ctx, svc.API.Run, svc.Worker.Run)
	case "api":
		if err := noArgs(cmd, rest); err != nil {
			return err
		}
		api, cleanup, err := initAPI(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer cleanup()
		return api.Run(ctx, nil)
	case "worker":
		if err := noArgs(cmd, rest); err != nil {
			return err
		}
		svc, cleanup, err := initWorker(ctx, cfg, log)
		if err != nil {
			return err
		}
		defer cleanup()
		return runAll(ctx, svc.API.Run, svc.Worker.Run)
	case "migrate":
		fs := newFlags(cmd)
		create := fs.Bool("create-database", false, "create the database first when it does not exist")
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		if *create {
			if err := postgres.EnsureDatabase(ctx, cfg.DatabaseURL); err != nil {
				return err
			}
		}
		m, cleanup, err := initMigrator(ctx, cfg)
		if err != nil {
			return err
		}
		defer cleanup()
		applied, err := m.Migrate(ctx)
		if err != nil {
			return err
		}
		if len(applied) == 0 {
			_, err = fmt.Fprintln(stdout, "database is up to date")
		} else {
			_, err = fmt.Fprintf(stdout, "applied %d migration(s): %s\n", len(applied), strings.Join(applied, ", "))
		}
		return err
	case "tenants":
		return dispatch(ctx, cfg, cmd, rest, stdout, verb{"create", runTenantsCreate})
	case "tokens":
		return dispatch(ctx, cfg, cmd, rest, stdout,
			verb{"create", runTokensCreate}, verb{"list", runTokensList}, verb{"revoke", runTokensRevoke})
	case "keys":
		return dispatch(ctx, cfg, cmd, rest, stdout, verb{"rotate", runKeysRotate})
	default:
		return usageError(fmt.Sprintf("unknown command %q", cmd))
	}
}

// verb is one subcommand of a command group ("tokens create").
type verb struct {
	name string
	run  func(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error
}

// dispatch runs the verb rest[0] names with the arguments after it; a
// missing or unknown verb is a usage error listing the group's verbs.
func dispatch(ctx context.Context, cfg config.Config, group string, rest []string, stdout io.Writer, verbs ...verb) error {
	names := make([]string, len(verbs))
	for i, v := range verbs {
		if len(rest) > 0 && rest[0] == v.name {
			return v.run(ctx, cfg, rest[1:], stdout)
		}
		names[i] = v.name
	}
	return usageError(fmt.Sprintf("usage: codelotse %s %s …", group, strings.Join(names, "|")))
}

func runTenantsCreate(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	fs := newFlags("tenants create")
	name := fs.String("name", "", "the tenant's name")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	admin, cleanup, err := initAccountAdmin(ctx, cfg)
	if err != nil {
		return err
	}
	defer cleanup()
	id, err := admin.CreateTenant.Handle(ctx, accounts.CreateTenant{Name: *name})
	if err != nil {
		return userError(err)
	}
	_, err = fmt.Fprintln(stdout, id)
	return err
}

func runTokensCreate(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	fs := newFlags("tokens create")
	tenant := fs.String("tenant", "", "the tenant's id")
	perms := fs.String("permissions", "", "comma-separated: tenant:manage, repo:manage")
	label := fs.String("label", "", "a label to tell the token apart (at most 100 characters)")
	expiresIn := fs.String("expires-in", "", "the token expires this long after its creation: 90d, 720h, 30m (default: never)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	lifetime, err := accounts.ParseLifetime(*expiresIn)
	if err != nil {
		return userError(err)
	}
	admin, cleanup, err := initAccountAdmin(ctx, cfg)
	if err != nil {
		return err
	}
	defer cleanup()
	var list []string
	if *perms != "" {
		list = strings.Split(*perms, ",")
	}
	token, err := admin.CreateToken.Handle(ctx, accounts.CreateToken{TenantID: *tenant, Permissions: list, Label: *label, ExpiresIn: lifetime})
	if err != nil {
		return userError(err)
	}
	_, err = fmt.Fprintln(stdout, token)
	return err
}

// runTokensList prints one token a line, tab-separated: id, label
// (quoted), permissions, created, last used, expires ("-" for none).
func runTokensList(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	fs := newFlags("tokens list")
	tenant := fs.String("tenant", "", "the tenant's id")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	admin, cleanup, err := initAccountAdmin(ctx, cfg)
	if err != nil {
		return err
	}
	defer cleanup()
	list, err := admin.ListTokens.Handle(ctx, accounts.ListTokens{TenantID: *tenant})
	if err != nil {
		return userError(err)
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintln(w, "ID\tLABEL\tPERMISSIONS\tCREATED\tLAST USED\tEXPIRES")
	when := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	for _, t := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, strconv.Quote(t.Label), strings.Join(t.Permissions, ","),
			when(t.CreatedAt), when(t.LastUsedAt), when(t.ExpiresAt))
	}
	return w.Flush()
}

func runTokensRevoke(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	fs := newFlags("tokens revoke")
	if err := fs.Parse(args); err != nil {
		return usageError(fmt.Sprintf("%s: %v", fs.Name(), err))
	}
	if fs.NArg() != 1 {
		return usageError("usage: codelotse tokens revoke ID")
	}
	admin, cleanup, err := initAccountAdmin(ctx, cfg)
	if err != nil {
		return err
	}
	defer cleanup()
	info, err := admin.RevokeToken.Handle(ctx, accounts.RevokeToken{ID: fs.Arg(0)})
	if err != nil {
		return userError(err)
	}
	_, err = fmt.Fprintf(stdout, "revoked %s of tenant %s\n", info.ID, info.TenantID)
	return err
}

func runKeysRotate(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error {
	fs := newFlags("keys rotate")
	batch := fs.Int("batch-size", operations.RotateKeysBatch, "credentials per batch")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if len(cfg.Keys) == 0 {
		return errors.New("keys rotate: QUAVON_ENCRYPTION_KEYS is not set")
	}
	rotate, cleanup, err := initRotateKeys(ctx, cfg)
	if err != nil {
		return err
	}
	defer cleanup()
	res, err := rotate.Handle(ctx, operations.RotateKeys{BatchSize: *batch})
	if _, perr := fmt.Fprintf(stdout, "rotated: %d, already primary: %d, skipped: %d, failed: %d\nprompt logs rotated: %d, already primary: %d, skipped: %d, failed: %d\n",
		res.Rotated, res.AlreadyPrimary, res.Skipped, res.Failed,
		res.PromptLogs.Rotated, res.PromptLogs.AlreadyPrimary, res.PromptLogs.Skipped, res.PromptLogs.Failed); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		return userError(err)
	}
	if res.Failed > 0 {
		return fmt.Errorf("keys rotate: %d credential(s) could not be opened with the key ring: servers %s",
			res.Failed, strings.Join(res.FailedIDs, ", "))
	}
	if res.PromptLogs.Failed > 0 {
		return fmt.Errorf("keys rotate: %d prompt log(s) could not be opened with the key ring: %s",
			res.PromptLogs.Failed, strings.Join(res.PromptLogs.FailedIDs, ", "))
	}
	return nil
}

// userError turns an app error into its message (the code and text a
// user may see); other errors pass through.
func userError(err error) error {
	var e *app.Error
	if errors.As(err, &e) {
		if e.Code == app.CodeInternal {
			return err
		}
		msg := e.Message
		for field, reason := range e.Fields {
			msg += "; " + field + " " + reason
		}
		return errors.New(msg)
	}
	return err
}

func newFlags(cmd string) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parseFlags parses a command's flags; positional arguments are refused.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return usageError(fmt.Sprintf("%s: %v", fs.Name(), err))
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("%s: unexpected argument %q", fs.Name(), fs.Arg(0)))
	}
	return nil
}

func noArgs(cmd string, rest []string) error { return parseFlags(newFlags(cmd), rest) }

func printVersion(w io.Writer) error {
	_, err := fmt.Fprintf(w, "codelotse %s\nprotocol versions: %s\nsigned off: %t\n",
		version, strings.Join(mcp.SupportedProtocolVersions(), ", "), gate.SignedOff)
	return err
}

// runAll runs the API and the worker until ctx is done (SIGTERM) or one of
// them returns; whichever returns first stops the other. Both stop
// gracefully; the result is the first error.
func runAll(ctx context.Context, api func(context.Context, func(net.Addr)) error, work func(context.Context) error) error {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var g errgroup.Group
	g.Go(func() error { defer stop(); return api(ctx, nil) })
	g.Go(func() error { defer stop(); return work(ctx) })
	return g.Wait()
}
