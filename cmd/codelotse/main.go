// Command codelotse is the CodeLotse MCP-context service: the admin REST
// API, the review worker and the operator commands (docs/operations.md,
// Commands).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/codelotse/codelotse/adapters/config"
	"github.com/codelotse/codelotse/adapters/logging"
	"github.com/codelotse/codelotse/adapters/tracing"
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/errgroup"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

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

// run runs a command line. It returns errors instead of exiting so tests
// can drive it.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError("no command given")
	}
	name, rest := args[0], args[1:]
	if name == "help" || name == "-h" || name == "--help" {
		_, err := fmt.Fprint(stdout, usage)
		return err
	}
	cmd, found := findCommand(name)
	if found && cmd.plain {
		return cmd.run(ctx, commandEnv{stdout: stdout}, rest)
	}
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	if !found {
		return usageError(fmt.Sprintf("unknown command %q", name))
	}
	if cmd.traced {
		stopTracing, err := tracing.Setup(ctx, getenv, version)
		if err != nil {
			return err
		}
		defer stopTracing()
	}
	if cmd.verbs != nil {
		return dispatch(ctx, cfg, name, rest, stdout, cmd.verbs...)
	}
	return cmd.run(ctx, commandEnv{cfg: cfg, log: logging.New(stderr, cfg.LogLevel), stdout: stdout}, rest)
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
