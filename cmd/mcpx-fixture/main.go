// Command mcpx-fixture serves the MCP conformance fixture
// (runtime/fixture) on mcpx's own runtime (runtime/host), as a server of
// its own:
//
//	mcpx-fixture                            # stdio: one JSON-RPC message per line on stdin/stdout
//	mcpx-fixture --listen 127.0.0.1:7777    # Streamable HTTP at http://127.0.0.1:7777/mcp
//	mcpx-fixture --listen 127.0.0.1:0       # any free port; the URL is printed on stderr
//
// Over stdio it is the upstream the gateway will front in conformance
// runs; over HTTP the suite can test it directly (the suite only speaks
// HTTP). `mcpx serve --builtin fixture` serves the same namespace under
// mcpx's own name; this command reports a server name of its own,
// mcpx-conformance-fixture. stdout carries only protocol; logs go to
// stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/fixture"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// serverName is the serverInfo.name the fixture reports.
const serverName = "mcpx-conformance-fixture"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run serves the fixture on stdin and stdout until stdin ends or ctx is
// done, or with --listen over Streamable HTTP until ctx is done. It
// returns the exit code: 0 after a clean end, 1 on a failure, 2 on a
// usage error.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpx-fixture", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: mcpx-fixture [--listen ADDR]\n\n"+
			"Serves the MCP conformance fixture over stdio, or with --listen over\n"+
			"Streamable HTTP at http://ADDR%s (port 0 picks a free port; the URL\n"+
			"is printed on stderr).\n\n", streamhttp.Path)
		fs.PrintDefaults()
	}
	listen := fs.String("listen", "", "serve Streamable HTTP on this address (e.g. "+streamhttp.DefaultAddr+") instead of stdio")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcpx-fixture: unexpected argument %q\n", fs.Arg(0))
		return 2
	}

	// Its requestState is sealed as mcpx seals its own: with
	// $MCPX_STATE_KEY, else a key of the process's own.
	states, _, err := requeststate.Load("", os.LookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "mcpx-fixture: the requestState key: %v\n", err)
		return 1
	}
	c := host.Config{
		NS:   fixture.NewWith(states),
		Info: mcp.Implementation{Name: serverName, Title: "mcpx conformance fixture", Version: "0.0.0"},
		Log:  slog.New(slog.NewTextHandler(stderr, nil)), // stdout carries only protocol
	}
	if *listen == "" {
		err = host.Stdio(ctx, c, stdin, stdout)
	} else {
		err = host.HTTP(ctx, c, *listen, func(url string) {
			fmt.Fprintf(stderr, "mcpx-fixture: serving the conformance fixture at %s\n", url)
		})
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "mcpx-fixture: %v\n", err)
		return 1
	}
	return 0
}
