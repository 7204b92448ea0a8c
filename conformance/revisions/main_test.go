package main

import (
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
)

// TestWrite: one line per table, newest first, each only the revision id
// (run.sh reads the lines as words).
func TestWrite(t *testing.T) {
	var b strings.Builder
	write(&b, revision.Tables)
	var want strings.Builder
	for _, r := range mcp.Revisions {
		want.WriteString(string(r) + "\n")
	}
	if b.String() != want.String() {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want.String())
	}
	b.Reset()
	write(&b, []*revision.Table{{Revision: "2026-12-01"}, {Revision: "2026-07-28"}})
	if b.String() != "2026-12-01\n2026-07-28\n" {
		t.Errorf("a new revision: got %q", b.String())
	}
}
