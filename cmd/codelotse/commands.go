package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/codelotse/codelotse/adapters/config"
	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/app/operations"
	"github.com/rs/zerolog"
)

// command is one top-level command of the CLI and its lines in the usage.
type command struct {
	name string
	does string // its usage line; a group's verbs carry their own
	// run runs the command with the arguments after its name; a group has
	// verbs instead.
	run    func(ctx context.Context, env commandEnv, args []string) error
	verbs  []verb
	plain  bool // runs without the configuration
	traced bool // a long-running process: tracing is set up first
}

// commandEnv is what a command runs with.
type commandEnv struct {
	cfg    config.Config
	log    zerolog.Logger
	stdout io.Writer
}

// verb is one subcommand of a command group ("tokens create").
type verb struct {
	name string
	run  func(ctx context.Context, cfg config.Config, args []string, stdout io.Writer) error
	args string // the usage line's arguments after the verb
	does string
}

// commands are the CLI's commands, in the order the usage lists them.
var commands = []command{
	{name: "serve", does: "admin REST API and review worker in one process", run: runServe, traced: true},
	{name: "api", does: "the REST API alone", run: runAPI, traced: true},
	{name: "worker", does: "the review worker alone", run: runWorker, traced: true},
	{name: "migrate", does: "apply the database migrations", run: runMigrate},
	{name: "tenants", verbs: []verb{
		{"create", runTenantsCreate, "--name NAME", "create a tenant, print its id"},
	}},
	{name: "tokens", verbs: []verb{
		{"create", runTokensCreate, "--tenant ID --permissions tenant:manage,repo:manage [--label TEXT] [--expires-in DURATION]", "create an API token, print it once"},
		{"list", runTokensList, "--tenant ID", "list a tenant's tokens (never the secret)"},
		{"revoke", runTokensRevoke, "ID", "revoke a token at once (and its web sessions)"},
	}},
	{name: "keys", verbs: []verb{
		{"rotate", runKeysRotate, "", "re-encrypt every credential under the primary key"},
	}},
	{name: "version", does: "print version, protocol versions and sign-off", plain: true,
		run: func(_ context.Context, env commandEnv, _ []string) error { return printVersion(env.stdout) }},
}

// usage is the text help prints, and main with a usage error.
var usage = usageText()

func usageText() string {
	var b strings.Builder
	b.WriteString("usage: codelotse <command>\n\ncommands:\n")
	line := func(synopsis, does string) {
		if len(synopsis) < 40 {
			fmt.Fprintf(&b, "  %-40s%s\n", synopsis, does)
			return
		}
		fmt.Fprintf(&b, "  %s\n  %40s%s\n", synopsis, "", does)
	}
	for _, c := range commands {
		if c.verbs == nil {
			line(c.name, c.does)
		}
		for _, v := range c.verbs {
			line(strings.TrimSpace(c.name+" "+v.name+" "+v.args), v.does)
		}
	}
	return b.String()
}

func findCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
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

func runServe(ctx context.Context, env commandEnv, args []string) error {
	if err := noArgs("serve", args); err != nil {
		return err
	}
	svc, cleanup, err := initServe(ctx, env.cfg, env.log)
	if err != nil {
		return err
	}
	defer cleanup()
	return runAll(ctx, svc.API.Run, svc.Worker.Run)
}

func runAPI(ctx context.Context, env commandEnv, args []string) error {
	if err := noArgs("api", args); err != nil {
		return err
	}
	api, cleanup, err := initAPI(ctx, env.cfg, env.log)
	if err != nil {
		return err
	}
	defer cleanup()
	return api.Run(ctx, nil)
}

func runWorker(ctx context.Context, env commandEnv, args []string) error {
	if err := noArgs("worker", args); err != nil {
		return err
	}
	svc, cleanup, err := initWorker(ctx, env.cfg, env.log)
	if err != nil {
		return err
	}
	defer cleanup()
	return runAll(ctx, svc.API.Run, svc.Worker.Run)
}

func runMigrate(ctx context.Context, env commandEnv, args []string) error {
	fs := newFlags("migrate")
	create := fs.Bool("create-database", false, "create the database first when it does not exist")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *create {
		if err := postgres.EnsureDatabase(ctx, env.cfg.DatabaseURL); err != nil {
			return err
		}
	}
	m, cleanup, err := initMigrator(ctx, env.cfg)
	if err != nil {
		return err
	}
	defer cleanup()
	applied, err := m.Migrate(ctx)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		_, err = fmt.Fprintln(env.stdout, "database is up to date")
	} else {
		_, err = fmt.Fprintf(env.stdout, "applied %d migration(s): %s\n", len(applied), strings.Join(applied, ", "))
	}
	return err
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
