package revs

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
)

// Peer is a real MCP implementation that tests run against mcpx (a client
// SDK, an upstream server), with the protocol versions it speaks as its own
// sources list them. A real-peer matrix runs the revisions in the tables
// that the peer speaks (Revisions); Uncovered names those no peer speaks,
// so that a new revision shows up as uncovered rather than silently absent.
type Peer struct {
	Name   string   // what it is and its version, e.g. "go-sdk v1.8.0 client"
	Speaks []string // the versions it supports, as it lists them
}

// Revisions is every revision in the tables that p speaks, newest first.
func (p Peer) Revisions() []mcp.Revision {
	return where(tables, func(t *revision.Table) bool { return slices.Contains(p.Speaks, string(t.Revision)) })
}

// Unknown is every version p speaks that the tables lack, in p's order.
func (p Peer) Unknown() []string {
	var out []string
	for _, v := range p.Speaks {
		if lookup(mcp.Revision(v)) == nil {
			out = append(out, v)
		}
	}
	return out
}

// Uncovered is every revision in the tables that none of peers speaks,
// newest first.
func Uncovered(peers ...Peer) []mcp.Revision {
	return where(tables, func(t *revision.Table) bool {
		return !slices.ContainsFunc(peers, func(p Peer) bool { return slices.Contains(p.Speaks, string(t.Revision)) })
	})
}

// Coverage describes, one line per revision in the tables (newest first),
// which of peers speak it, then the versions a peer speaks that the tables
// lack: for a test to log.
func Coverage(peers ...Peer) string {
	var b strings.Builder
	for _, rev := range All() {
		var who []string
		for _, p := range peers {
			if slices.Contains(p.Speaks, string(rev)) {
				who = append(who, p.Name)
			}
		}
		if len(who) == 0 {
			who = []string{"NO REAL PEER"}
		}
		fmt.Fprintf(&b, "%s: %s\n", rev, strings.Join(who, ", "))
	}
	for _, p := range peers {
		if u := p.Unknown(); len(u) > 0 {
			fmt.Fprintf(&b, "%s also speaks %s, which mcpx does not\n", p.Name, strings.Join(u, ", "))
		}
	}
	return b.String()
}

// ReportCoverage logs Coverage of peers, the real peers a test package
// runs as role ("client", "upstream"), and skips t naming the revisions
// none of them speaks: a revision without a real peer is reported, not
// failed, and a skip stands out in `go test -v` where a log line would not.
// A peer that speaks no revision in the tables fails t: its tests would
// run nothing.
func ReportCoverage(t testing.TB, role string, peers ...Peer) {
	t.Helper()
	t.Logf("real %ss by revision:\n%s", role, Coverage(peers...))
	for _, p := range peers {
		if len(p.Revisions()) == 0 {
			// Not a new revision without a peer: a peer that runs nothing.
			t.Errorf("%s speaks none of the revisions in the tables (it lists %v): its tests run nothing", p.Name, p.Speaks)
		}
	}
	if u := Uncovered(peers...); len(u) > 0 {
		t.Skipf("no real %s covers %s: the real-peer tests do not run it (each peer's Speaks lists what it supports)", role, strings.Join(Strings(u), ", "))
	}
}
