// Command revisions prints the protocol revisions mcpx is generated from,
// newest first, one a line, from the generated tables. conformance/run.sh
// runs the conformance suite at each of them the installed suite knows, so
// that a new revision is run (or reported as skipped) without editing it.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/mcpx-dev/mcpx/generated/revision"
)

func main() {
	if len(os.Args) > 1 {
		fmt.Fprintln(os.Stderr, "usage: go run ./conformance/revisions (no arguments): prints the revisions in the generated tables, newest first")
		os.Exit(2)
	}
	write(os.Stdout, revision.Tables)
}

func write(w io.Writer, tables []*revision.Table) {
	for _, t := range tables {
		fmt.Fprintln(w, t.Revision)
	}
}
