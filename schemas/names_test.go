package schemas

import "testing"

func TestEntryCovers(t *testing.T) {
	for _, c := range []struct {
		id, spec string
		want     bool
	}{
		{"2025-11-25", "2025-11-25", true},
		{"2025-06-18", "2025-11-25", false},
		{"2025-06-18", "2025-06-18..2025-11-25", true},
		{"2026-07-28", "2025-06-18..2025-11-25", false},
		{"2024-11-05", "..2024-11-05", true},
		{"2025-03-26", "..2024-11-05", false},
		{"2026-07-28", "2025-11-25..", true},
		{"2025-06-18", "2025-11-25..", false},
		{"2025-06-18", "", true},
	} {
		e := &Entry{Revisions: c.spec}
		if got := e.Covers(c.id); got != c.want {
			t.Errorf("Entry{Revisions: %q}.Covers(%q) = %v, want %v", c.spec, c.id, got, c.want)
		}
	}
}

func TestIsReservedMetaKey(t *testing.T) {
	for key, want := range map[string]bool{
		"io.modelcontextprotocol/serverInfo": true,
		"dev.mcp/x":                          true,
		"com.example/x":                      false,
		"modelcontextprotocol.io/x":          false,
		"progressToken":                      false,
		"io.modelcontextprotocol":            false, // no prefix without a slash
	} {
		if got := IsReservedMetaKey(key); got != want {
			t.Errorf("IsReservedMetaKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestGoName(t *testing.T) {
	for in, want := range map[string]string{
		"_meta":             "Meta",
		"params":            "Params",
		"structuredContent": "StructuredContent",
		"uriTemplate":       "URITemplate",
		"uri-template":      "URITemplate",
		"taskId":            "TaskID",
		"ttlMs":             "TTLMs",
		"ref/prompt":        "RefPrompt",
		"2fa":               "X2fa",
	} {
		if got := GoName(in); got != want {
			t.Errorf("GoName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOverlayParses(t *testing.T) {
	o, err := LoadOverlay()
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Entries) == 0 {
		t.Fatal("overlay.json has no entries")
	}
	for _, bad := range []string{
		`{"entries":[{"kind":"nope","why":"x"}]}`,
		`{"entries":[{"kind":"open","at":"Tool.x"}]}`,
		`{"entries":`,
		// A fallback names the variant it stands in for and what it becomes.
		`{"entries":[{"kind":"fallback","at":"ContentBlock","as":"text","func":"F","why":"x"}]}`,
		`{"entries":[{"kind":"fallback","at":"ContentBlock","variant":"*","func":"F","why":"x"}]}`,
		`{"entries":[{"kind":"fallback","at":"ContentBlock","variant":"*","as":"text","why":"x"}]}`,
	} {
		if _, err := ParseOverlay([]byte(bad)); err == nil {
			t.Errorf("ParseOverlay(%s) accepted it", bad)
		}
	}
}
