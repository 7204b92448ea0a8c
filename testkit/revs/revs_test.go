package revs

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
)

// TestTablesMatchRevisions: the tables hold mcp.Revisions, in its order
// (newest first, which for dates is descending), each of a known era, and
// there is at least one revision of each era.
func TestTablesMatchRevisions(t *testing.T) {
	var got []mcp.Revision
	for _, tab := range revision.Tables {
		got = append(got, tab.Revision)
		if tab.Era != eraLegacy && tab.Era != eraModern {
			t.Errorf("%s: era %q, want %q or %q", tab.Revision, tab.Era, eraLegacy, eraModern)
		}
	}
	if !slices.Equal(got, mcp.Revisions) {
		t.Errorf("tables hold %v, mcp.Revisions is %v", got, mcp.Revisions)
	}
	if !slices.IsSortedFunc(got, func(a, b mcp.Revision) int { return -cmpString(a, b) }) {
		t.Errorf("tables are not newest first: %v", got)
	}
	if !slices.Equal(All(), mcp.Revisions) {
		t.Errorf("All() = %v, want mcp.Revisions %v", All(), mcp.Revisions)
	}
	if len(Legacy()) == 0 || len(Modern()) == 0 {
		t.Errorf("legacy %v, modern %v: want at least one of each", Legacy(), Modern())
	}
	if len(Legacy())+len(Modern()) != len(All()) {
		t.Errorf("legacy %v and modern %v do not partition %v", Legacy(), Modern(), All())
	}
}

func cmpString(a, b mcp.Revision) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// fakeTables is a synthetic newer modern revision on top of two real
// shapes: what the tables look like after a new revision lands.
func fakeTables() []*revision.Table {
	return []*revision.Table{
		{Revision: "2026-12-01", Era: eraModern,
			Methods: []revision.Method{{Name: "tools/list"}, {Name: "tools/validate"}},
			Types:   []revision.Type{{Name: "Tool", Fields: []string{"name", "title", "icons"}}}},
		{Revision: "2026-07-28", Era: eraModern,
			Methods: []revision.Method{{Name: "tools/list"}},
			Types:   []revision.Type{{Name: "Tool", Fields: []string{"name", "title"}}}},
		{Revision: "2025-11-25", Era: eraLegacy,
			Methods:  []revision.Method{{Name: "tools/list"}, {Name: "ping"}},
			Types:    []revision.Type{{Name: "Tool", Fields: []string{"name", "title"}}},
			MetaKeys: []string{"io.modelcontextprotocol/related-task"}},
		{Revision: "2024-11-05", Era: eraLegacy,
			Methods: []revision.Method{{Name: "tools/list"}, {Name: "ping"}},
			Types:   []revision.Type{{Name: "Tool", Fields: []string{"name"}}}},
	}
}

func withTables(t *testing.T, tabs []*revision.Table) {
	old := tables
	tables = tabs
	t.Cleanup(func() { tables = old })
}

func revList(s ...string) []mcp.Revision {
	out := make([]mcp.Revision, len(s))
	for i, r := range s {
		out[i] = mcp.Revision(r)
	}
	return out
}

// TestRolesOfANewRevision: every role follows the tables, so a new
// revision is the newest, its predecessor the previous modern one, and the
// member and method lists take it in.
func TestRolesOfANewRevision(t *testing.T) {
	withTables(t, fakeTables())
	for _, c := range []struct {
		name      string
		got, want []mcp.Revision
	}{
		{"All", All(), revList("2026-12-01", "2026-07-28", "2025-11-25", "2024-11-05")},
		{"Legacy", Legacy(), revList("2025-11-25", "2024-11-05")},
		{"Modern", Modern(), revList("2026-12-01", "2026-07-28")},
		{"OldestFirst(Modern)", OldestFirst(Modern()), revList("2026-07-28", "2026-12-01")},
		{"WithMethod tools/validate", WithMethod("tools/validate"), revList("2026-12-01")},
		{"WithoutMethod ping", WithoutMethod("ping"), revList("2026-12-01", "2026-07-28")},
		{"WithMember Tool.title", WithMember("Tool", "title"), revList("2026-12-01", "2026-07-28", "2025-11-25")},
		{"WithoutMember Tool.title", WithoutMember("Tool", "title"), revList("2024-11-05")},
		{"WithoutMember of a missing type", WithoutMember("Task", "taskId"), All()},
		{"WithMetaKey", WithMetaKey("io.modelcontextprotocol/related-task"), revList("2025-11-25")},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if Newest() != "2026-12-01" || Oldest() != "2024-11-05" || NewestModern() != "2026-12-01" || NewestLegacy() != "2025-11-25" {
		t.Errorf("newest %s, oldest %s, newest modern %s, newest legacy %s", Newest(), Oldest(), NewestModern(), NewestLegacy())
	}
	if prev, ok := PreviousModern(); !ok || prev != "2026-07-28" {
		t.Errorf("PreviousModern() = %s, %v; want 2026-07-28", prev, ok)
	}
	if !IsModern("2026-07-28") || IsModern("2025-11-25") || !IsLegacy("2025-11-25") || IsModern("2027-01-01") || IsLegacy("2027-01-01") || Known("2027-01-01") {
		t.Error("IsModern/IsLegacy/Known disagree with the tables")
	}
	if !HasMember("2026-12-01", "Tool", "icons") || HasMember("2026-07-28", "Tool", "icons") || HasMember("2027-01-01", "Tool", "name") {
		t.Error("HasMember disagrees with the tables")
	}
	if !HasMethod(mcp.Revision("2025-11-25"), "ping") || HasMethod("2026-12-01", "ping") || !HasType("2024-11-05", "Tool") || HasType("2024-11-05", "Task") {
		t.Error("HasMethod/HasType disagree with the tables")
	}
}

// TestPreviousModernWithOne: with a single modern revision there is no
// previous one.
func TestPreviousModernWithOne(t *testing.T) {
	withTables(t, fakeTables()[1:])
	if prev, ok := PreviousModern(); ok {
		t.Errorf("PreviousModern() = %s with one modern revision", prev)
	}
}

// TestUncovered: a revision no peer speaks is uncovered, a version a peer
// speaks that the tables lack is unknown, and Coverage says both.
func TestUncovered(t *testing.T) {
	withTables(t, fakeTables())
	sdk := Peer{Name: "sdk", Speaks: []string{"2026-07-28", "2025-11-25", "2024-10-07"}}
	old := Peer{Name: "old", Speaks: []string{"2024-11-05"}}
	if got, want := sdk.Revisions(), revList("2026-07-28", "2025-11-25"); !slices.Equal(got, want) {
		t.Errorf("Revisions() = %v, want %v", got, want)
	}
	if got := sdk.Unknown(); !slices.Equal(got, []string{"2024-10-07"}) {
		t.Errorf("Unknown() = %v", got)
	}
	if got, want := Uncovered(sdk, old), revList("2026-12-01"); !slices.Equal(got, want) {
		t.Errorf("Uncovered = %v, want %v", got, want)
	}
	if got := Uncovered(); !slices.Equal(got, All()) {
		t.Errorf("Uncovered() with no peer = %v, want every revision", got)
	}
	const want = "2026-12-01: NO REAL PEER\n2026-07-28: sdk\n2025-11-25: sdk\n2024-11-05: old\nsdk also speaks 2024-10-07, which mcpx does not\n"
	if got := Coverage(sdk, old); got != want {
		t.Errorf("Coverage:\n%s\nwant:\n%s", got, want)
	}
}

// TestReportCoverage: an uncovered revision skips the report (visible,
// not a failure); full coverage passes it.
func TestReportCoverage(t *testing.T) {
	withTables(t, fakeTables())
	sdk := Peer{Name: "sdk", Speaks: []string{"2026-07-28", "2025-11-25", "2024-11-05"}}
	var uncovered, covered *testing.T
	t.Run("one revision uncovered", func(t *testing.T) { uncovered = t; ReportCoverage(t, "client", sdk) })
	t.Run("every revision covered", func(t *testing.T) {
		covered = t
		ReportCoverage(t, "client", sdk, Peer{Name: "new", Speaks: []string{"2026-12-01"}})
	})
	if !uncovered.Skipped() || uncovered.Failed() {
		t.Errorf("with 2026-12-01 uncovered: skipped %v, failed %v; want skipped", uncovered.Skipped(), uncovered.Failed())
	}
	if covered.Skipped() || covered.Failed() {
		t.Errorf("with every revision covered: skipped %v, failed %v; want passed", covered.Skipped(), covered.Failed())
	}
}

// TestReportCoverageOfAPeerThatRunsNothing: a peer none of whose versions
// the tables have fails the report. The failing subtest runs in a copy of
// the test binary, since a failed subtest fails its parent.
func TestReportCoverageOfAPeerThatRunsNothing(t *testing.T) {
	if os.Getenv("REVS_NOTHING_PEER") != "" {
		withTables(t, fakeTables())
		ReportCoverage(t, "client", Peer{Name: "future", Speaks: []string{"2030-01-01"}})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReportCoverageOfAPeerThatRunsNothing$")
	cmd.Env = append(os.Environ(), "REVS_NOTHING_PEER=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "future speaks none of the revisions in the tables") {
		t.Fatalf("want a failure naming the peer, got %v:\n%s", err, out)
	}
}
