package load

import (
	"testing"

	"github.com/mcpx-dev/mcpx/schemas"
)

func TestAllCompiles(t *testing.T) {
	set, err := All(schemas.SourceDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Revisions) != 5 || len(set.Extensions) != 1 {
		t.Fatalf("got %d revisions and %d extensions, want 5 and 1", len(set.Revisions), len(set.Extensions))
	}
	for _, r := range set.Revisions {
		if r.Defs["Tool"] == nil {
			t.Errorf("%s: no Tool definition", r.Schema.ID)
		}
		if got := r.DefName(r.Defs["Tool"]); got != "Tool" {
			t.Errorf("%s: DefName(Tool) = %q", r.Schema.ID, got)
		}
	}
}
