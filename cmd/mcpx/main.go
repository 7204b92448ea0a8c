// Command mcpx is the MCP gateway. For now it has one subcommand,
// `mcpx revisions`, which prints from the generated revision tables what
// differs between the protocol revisions mcpx speaks. `mcpx serve` and
// `mcpx stdio` come with the runtime.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `mcpx is a gateway for the Model Context Protocol.

Usage:

	mcpx <command> [flags]

Commands:

	revisions   print what differs between the protocol revisions
	            (mcpx revisions [--from REV] [--to REV] [--type NAME])
	help        print this help

Serving (mcpx serve, mcpx stdio) comes with the runtime.
Run "mcpx <command> -h" for a command's flags.
`

// run runs mcpx with args (without the program name) and returns the exit
// code: 0 on success, 1 on a failure, 2 on a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		return 0
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[1] == "revisions" {
			return runRevisions([]string{"-h"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	case "revisions":
		return runRevisions(args[1:], stdout, stderr)
	case "serve", "stdio":
		fmt.Fprintf(stderr, "mcpx: %q is not available yet: it comes with the runtime\n", args[0])
		return 2
	default:
		fmt.Fprintf(stderr, "mcpx: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}
