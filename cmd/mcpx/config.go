package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcpx-dev/mcpx/runtime/config"
)

const configUsage = `Usage:

	mcpx config check FILE   check a configuration file; print its servers or every problem
	mcpx config schema       print the JSON Schema configuration files are checked against
`

// runConfig runs `mcpx config ...`: check exits 1 when the file has
// problems, printing them on stderr one per line.
func runConfig(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "mcpx config: missing subcommand\n\n"+configUsage)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, configUsage)
		return 0
	case "check":
		if len(args) != 2 {
			fmt.Fprint(stderr, "mcpx config check: want one FILE\n\n"+configUsage)
			return 2
		}
		file := args[1]
		c, err := config.Load(file)
		if err != nil {
			var ce *config.Error
			if errors.As(err, &ce) {
				fmt.Fprintln(stderr, err)
			} else {
				fmt.Fprintf(stderr, "mcpx config check: %v\n", err)
			}
			return 1
		}
		names := make([]string, len(c.Servers))
		for i, s := range c.Servers {
			names[i] = s.Name
		}
		line := fmt.Sprintf("%s: ok, %s", file, plural(len(names), "server"))
		if len(names) > 0 {
			line += ": " + strings.Join(names, ", ")
		}
		fmt.Fprintln(stdout, line)
		return 0
	case "schema":
		if len(args) != 1 {
			fmt.Fprint(stderr, "mcpx config schema: takes no arguments\n\n"+configUsage)
			return 2
		}
		stdout.Write(config.Schema())
		return 0
	default:
		fmt.Fprintf(stderr, "mcpx config: unknown subcommand %q\n\n%s", args[0], configUsage)
		return 2
	}
}
