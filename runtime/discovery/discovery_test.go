package discovery

import (
	"slices"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

func TestWords(t *testing.T) {
	for in, want := range map[string][]string{
		"files__read_file": {"files", "read", "file"},
		"readFile":         {"read", "file"},
		"Read a file, v2.": {"read", "file", "v2"},
		"HTTPGet":          {"httpget"},
	} {
		if got := words(in); !slices.Equal(got, want) {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSearchRanks(t *testing.T) {
	ix := newIndex([]mcp.Tool{
		{Name: "files__read_file", Description: "Read the contents of a file.\nMore text here."},
		{Name: "files__write_file", Description: "Write a file."},
		{Name: "web__fetch", Description: "Fetch a URL and read its page as text."},
		{Name: "math__add", Description: "Add two numbers."},
	})
	got := ix.search("read file", 10)
	var names []string
	for _, f := range got {
		names = append(names, f.Name)
	}
	// Both words in the name beat one in a description.
	if len(names) != 3 || names[0] != "files__read_file" || slices.Contains(names, "math__add") {
		t.Fatalf("%v", got)
	}
	if got[0].Description != "Read the contents of a file." {
		t.Errorf("summary %q", got[0].Description)
	}
	if len(ix.search("read file", 1)) != 1 || len(ix.search("nothing matches", 5)) != 0 {
		t.Error("limit or empty search")
	}
}
