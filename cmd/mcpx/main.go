// Command mcpx is the MCP gateway. `mcpx serve` serves Streamable HTTP and
// `mcpx stdio` serves standard input and output: with --config they front
// the upstream servers a config file names, each under its namespace, and
// without it the built-in demo namespace. `mcpx config check` validates a
// config file, `mcpx config schema` prints its JSON Schema, and
// `mcpx revisions` prints from the generated revision tables what differs
// between the protocol revisions mcpx speaks.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// stdin is where `mcpx stdio` reads; a variable so tests can replace it.
var stdin io.Reader = os.Stdin

const usage = `mcpx is a gateway for the Model Context Protocol.

Usage:

	mcpx <command> [flags]

Commands:

	serve       serve Streamable HTTP at http://ADDR/mcp
	            (mcpx serve [--listen ADDR] [--config FILE | --builtin demo|fixture])
	stdio       serve on standard input and output
	            (mcpx stdio [--config FILE | --builtin demo|fixture])
	revisions   print what differs between the protocol revisions
	            (mcpx revisions [--from REV] [--to REV] [--type NAME])
	config      check a configuration file, or print its JSON Schema
	            (mcpx config check FILE | mcpx config schema)
	help        print this help

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
	case "config":
		return runConfig(args[1:], stdout, stderr)
	case "serve", "stdio":
		return runServe(args[0], args[1:], stdin, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "mcpx: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}
