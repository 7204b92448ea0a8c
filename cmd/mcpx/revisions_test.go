package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/revision"
)

// TestMemberChangesShowRenames: a member the tables spell differently in two
// revisions (the same hub member) is one rename, not a removal plus an
// addition; other changes keep each revision's spelling.
func TestMemberChangesShowRenames(t *testing.T) {
	older := revision.Type{Name: "Task", Fields: []string{"gone", "taskId", "ttl"}, Renamed: map[string]string{"ttl": "ttlMs"}}
	newer := revision.Type{Name: "Task", Fields: []string{"added", "taskId", "ttlMs"}}
	got := appendMemberChanges(nil, older, newer)
	want := []string{"+ added", "- gone", "ttl -> ttlMs (renamed)"}
	if !slices.Equal(got, want) {
		t.Fatalf("changes = %q, want %q", got, want)
	}
	// Both sides renamed from the hub's spelling: still a rename.
	a := revision.Type{Fields: []string{"x1"}, Renamed: map[string]string{"x1": "x"}}
	b := revision.Type{Fields: []string{"x2"}, Renamed: map[string]string{"x2": "x"}}
	if got := appendMemberChanges(nil, a, b); !slices.Equal(got, []string{"x1 -> x2 (renamed)"}) {
		t.Fatalf("changes = %q", got)
	}
}

// TestRevisionsPrintsRealRenames: every rename the generated tables record
// between two adjacent revisions is printed as a rename by `mcpx revisions`,
// and neither spelling as an addition or removal.
func TestRevisionsPrintsRealRenames(t *testing.T) {
	_, out, _ := mcpx(t, "revisions")
	ts := oldestFirst()
	found := 0
	for i := 0; i+1 < len(ts); i++ {
		for _, x := range ts[i].Types {
			nx, ok := ts[i+1].Type(x.Name)
			if !ok {
				continue
			}
			for _, f := range x.Fields {
				for _, g := range nx.Fields {
					if f != g && x.HubName(f) == nx.HubName(g) {
						found++
						l := typeLine(sectionOf(out, string(ts[i].Revision), string(ts[i+1].Revision)), x.Name)
						if !strings.Contains(l, f+" -> "+g+" (renamed)") || strings.Contains(l, "+ "+g) || strings.Contains(l, "- "+f) {
							t.Errorf("%s -> %s: %s line %q does not show %s -> %s as a rename", ts[i].Revision, ts[i+1].Revision, x.Name, l, f, g)
						}
					}
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("the tables record no rename between adjacent revisions (Task.ttl -> ttlMs was one)")
	}
}

// sectionOf returns the part of `mcpx revisions` output comparing a with b.
func sectionOf(out, a, b string) string {
	_, rest, _ := strings.Cut(out, a+" -> "+b+"\n")
	sec, _, _ := strings.Cut(rest, "\n\n")
	return sec
}

// TestMetaKeyRenamePrinted: a reserved _meta key the tables spell
// differently in two revisions is printed as one rename.
func TestMetaKeyRenamePrinted(t *testing.T) {
	a := &revision.Table{Revision: "2026-07-28", MetaKeys: []string{"io.modelcontextprotocol/client", "io.modelcontextprotocol/gone"}, MetaRenamed: map[string]string{"io.modelcontextprotocol/client": "io.modelcontextprotocol/clientInfo"}}
	b := &revision.Table{Revision: "2026-12-01", MetaKeys: []string{"io.modelcontextprotocol/clientInfo"}}
	var out strings.Builder
	printDiff(&out, a, b, "")
	for _, want := range []string{"  - _meta key io.modelcontextprotocol/gone\n", "  _meta key io.modelcontextprotocol/client -> io.modelcontextprotocol/clientInfo (renamed)\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "+ _meta key") {
		t.Errorf("the rename is also printed as an addition:\n%s", out.String())
	}
}
