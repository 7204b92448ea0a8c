// Command mcpx-fixture serves the MCP conformance fixture
// (runtime/fixture) through mcpx's own edge, so the official conformance
// suite can test mcpx without an upstream server:
//
//	mcpx-fixture                      # Streamable HTTP on 127.0.0.1:7777/mcp
//	mcpx-fixture -addr 127.0.0.1:0    # any free port; the URL is printed on stderr
//	mcpx-fixture -stdio               # one JSON-RPC message per line on stdin/stdout
//
// The suite only speaks HTTP (conformance server --url URL); -stdio is for
// trying the fixture by hand or from a stdio client. `mcpx serve --builtin
// fixture` serves the same namespace under mcpx's own name; this command
// exists so conformance runs need no flags and report a server name of
// their own.
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
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run serves the fixture until ctx ends or, with -stdio, stdin does. It
// returns the exit code: 0 after a clean end, 1 on a failure, 2 on a usage
// error.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpx-fixture", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", streamhttp.DefaultAddr, "address to serve Streamable HTTP on (the endpoint is "+streamhttp.Path+")")
	useStdio := fs.Bool("stdio", false, "serve on stdin and stdout instead of HTTP")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcpx-fixture: unexpected argument %q\n", fs.Arg(0))
		return 2
	}

	c := host.Config{
		NS:   fixture.New(),
		Info: mcp.Implementation{Name: "mcpx-conformance-fixture", Title: "mcpx conformance fixture", Version: "0.0.0"},
		Log:  slog.New(slog.NewTextHandler(stderr, nil)), // stdout carries only protocol
	}
	var err error
	if *useStdio {
		err = host.Stdio(ctx, c, stdin, stdout)
	} else {
		err = host.HTTP(ctx, c, *addr, func(url string) {
			fmt.Fprintf(stderr, "mcpx-fixture: serving the conformance fixture at %s\n", url)
		})
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "mcpx-fixture: %v\n", err)
		return 1
	}
	return 0
}
