package schemas

import (
	"strings"
	"testing"
)

// TestRanges: the one range syntax of the overlay and the manifest.
func TestRanges(t *testing.T) {
	for _, c := range []struct {
		r, rev string
		in     bool
	}{
		{"", "2024-11-05", true},
		{"2025-06-18", "2025-06-18", true},
		{"2025-06-18", "2025-11-25", false},
		{"2026-07-28..", "2026-07-28", true},
		{"2026-07-28..", "2026-12-01", true}, // a newer revision inherits an open range
		{"2026-07-28..", "2025-11-25", false},
		{"..2024-11-05", "2024-11-05", true},
		{"..2024-11-05", "2025-03-26", false},
		{"2025-03-26..2025-11-25", "2025-06-18", true},
		{"2025-03-26..2025-11-25", "2026-07-28", false},
	} {
		if got := InRange(c.r, c.rev); got != c.in {
			t.Errorf("InRange(%q, %q) = %v, want %v", c.r, c.rev, got, c.in)
		}
	}
	for _, bad := range []string{"..", "2026-07-28...", "latest", "2026-07-28..2025-11-25", "2026-7-28.."} {
		if _, _, err := ParseRange(bad); err == nil {
			t.Errorf("ParseRange(%q) accepted it", bad)
		}
		if InRange(bad, "2026-07-28") {
			t.Errorf("InRange(%q, ...) is true for a malformed range", bad)
		}
	}
}

// TestExtensionRange: an extension's "extends" is a range; a revision newer
// than its start inherits it, and a range that covers no listed revision,
// or is malformed, is refused with the extension's id.
func TestExtensionRange(t *testing.T) {
	doc := func(extends string) []byte {
		return []byte(`{"schemas": [{"id": "2026-12-01", "era": "modern"}, {"id": "2026-07-28", "era": "modern"}, {"id": "2025-11-25", "era": "legacy"}],
			"extensions": [{"id": "ext/x", "extends": "` + extends + `"}]}`)
	}
	m, err := ParseManifest(doc("2026-07-28.."))
	if err != nil {
		t.Fatal(err)
	}
	for rev, want := range map[string]int{"2026-12-01": 1, "2026-07-28": 1, "2025-11-25": 0} {
		if got := len(m.ExtensionsOf(rev)); got != want {
			t.Errorf("ExtensionsOf(%s) = %d extensions, want %d", rev, got, want)
		}
	}
	if m, _ := ParseManifest(doc("2026-07-28")); len(m.ExtensionsOf("2026-12-01")) != 0 {
		t.Error("a single id extends a newer revision")
	}
	for _, bad := range []string{"", "2027-01-01..", "tasks", "..2020-01-01"} {
		_, err := ParseManifest(doc(bad))
		if err == nil || !strings.Contains(err.Error(), "ext/x") {
			t.Errorf("extends %q: err = %v, want one naming the extension", bad, err)
		}
	}
	// The real manifest: the tasks extension is open-ended.
	real, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range real.Extensions {
		if lo, hi, _ := ParseRange(e.Extends); hi != "" || lo == "" {
			t.Errorf("extension %s: extends %q, want an open range \"A..\" so a newer revision inherits it", e.ID, e.Extends)
		}
	}
}

// TestOverlayRanges: an overlay entry's revisions must parse.
func TestOverlayRanges(t *testing.T) {
	_, err := ParseOverlay([]byte(`{"entries": [{"kind": "open", "at": "T.x", "revisions": "2026-07-28...", "why": "w"}]}`))
	if err == nil || !strings.Contains(err.Error(), "revisions") {
		t.Fatalf("err = %v, want a revisions error", err)
	}
	_, err = ParseOverlay([]byte(`{"entries": [{"kind": "open", "at": "T.x", "goName": "X", "why": "w"}]}`))
	if err == nil || !strings.Contains(err.Error(), "goName") {
		t.Fatalf("goName on an open entry: err = %v, want a goName error", err)
	}
	_, err = ParseOverlay([]byte(`{"entries": [{"kind": "removed", "at": "T.x", "why": "w"}]}`))
	if err == nil || !strings.Contains(err.Error(), "removed") {
		t.Fatalf("removed without revisions: err = %v", err)
	}
}
