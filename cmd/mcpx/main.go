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
	"runtime"
	"runtime/debug"
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
	version     print mcpx's version (also: mcpx --version)
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
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, versionLine())
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

// versionLine is what `mcpx --version` prints: mcpx's version, the commit
// it was built from when the build recorded one, and the Go release.
func versionLine() string {
	line := "mcpx " + version
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			line += " (" + rev
			if modified == "true" {
				line += ", modified"
			}
			line += ")"
		}
	}
	return line + " " + runtime.Version()
}
