package emit

import (
	"go/doc/comment"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/gen/model"
)

// TestDocLinks: a {@link} to a type of the package is a Go doc link that
// go/doc/comment (what gofmt, go doc and pkgsite use) parses as one; any
// other target is plain text, a request glued to its method (as the
// schemas have it) reads as the method, and other braces stay.
func TestDocLinks(t *testing.T) {
	d := newDocs([]string{"Tool", "CallToolResult", "CreateMessageRequest"}, []*model.HubMethod{
		{Method: model.Method{Name: "tools/call", Def: "CallToolRequest"}},
		{Method: model.Method{Name: "sampling/createMessage", Def: "CreateMessageRequest"}},
	})
	for _, c := range []struct {
		name, in, want string
		links          []string // doc links go/doc/comment must find
	}{
		{"type of the package", "Describes a {@link Tool} to clients.", "Describes a [Tool] to clients.", []string{"Tool"}},
		{"member of a type", "The same format as {@link CallToolResult.content}.", "The same format as [CallToolResult].content.", []string{"CallToolResult"}},
		{"request glued to its method, a type", "For a {@link CreateMessageRequestsampling/createMessage} request.", "For a [CreateMessageRequest] (sampling/createMessage) request.", []string{"CreateMessageRequest"}},
		{"request glued to its method, not a type", "For a {@link CallToolRequesttools/call} request.", "For a tools/call request.", nil},
		{"label after a non-name character", "Keys MUST follow the {@link MetaObject`_meta` key naming rules}.", "Keys MUST follow the `_meta` key naming rules.", nil},
		{"label after a bar", "See {@link Tool | the tool}.", "See [Tool] (the tool).", []string{"Tool"}},
		{"not a type", "Extends {@link MetaObject}.", "Extends MetaObject.", nil},
		{"other braces", "Default is `{ mode: \"auto\" }`; see {@link Tool}.", "Default is `{ mode: \"auto\" }`; see [Tool].", []string{"Tool"}},
		{"unterminated", "A {@link Tool", "A {@link Tool", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := d.links(c.in)
			if got != c.want {
				t.Fatalf("links(%q) = %q, want %q", c.in, got, c.want)
			}
			p := comment.Parser{LookupSym: func(recv, name string) bool { return recv == "" && d.types[name] }}
			var found []string
			for _, b := range p.Parse(got).Content {
				if para, ok := b.(*comment.Paragraph); ok {
					for _, x := range para.Text {
						if l, ok := x.(*comment.DocLink); ok {
							found = append(found, l.Name)
						}
					}
				}
			}
			if !slices.Equal(found, c.links) {
				t.Errorf("go/doc/comment finds doc links %q in %q, want %q", found, got, c.links)
			}
		})
	}
}

// TestSpan: doc comments name revisions so that adding a revision that
// changes nothing about a thing rewrites none of its comments: nothing for
// every revision, an open range for what reaches the newest, a closed range
// only for what ended.
func TestSpan(t *testing.T) {
	all := []string{"2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"}
	set := func(revs ...string) model.RevSet {
		s := model.RevSet{}
		for _, r := range revs {
			s[r] = true
		}
		return s
	}
	for _, c := range []struct {
		revs model.RevSet
		want string
	}{
		{set(all...), ""},
		{set("2026-07-28", "2025-11-25", "2025-06-18"), "Since 2025-06-18"},
		{set("2026-07-28"), "Since 2026-07-28"},
		{set("2025-11-25", "2025-06-18", "2024-11-05"), "Revisions: 2024-11-05 to 2025-11-25"},
		{set("2025-11-25"), "Only in 2025-11-25"},
		{set("2026-07-28", "2024-11-05"), "Revisions: 2024-11-05, 2026-07-28"},
		{set(), "No revision"},
	} {
		if got := span(all, c.revs); got != c.want {
			t.Errorf("span(%v) = %q, want %q", c.revs.Sorted(), got, c.want)
		}
	}
	// A new revision that has everything the newest had changes no span
	// that reached the newest.
	grown := append([]string{"2026-12-01"}, all...)
	if got := span(grown, set(append([]string{"2026-12-01"}, all[:3]...)...)); got != "Since 2025-06-18" {
		t.Errorf("after a new revision: %q", got)
	}
}

// TestDeprecatedOnlyWhenMarked: a doc comment has a paragraph starting with
// "Deprecated:" (which go vet, gopls and pkgsite act on) only when the schema
// says `deprecated: true`; a description that starts with the word in prose
// is rephrased.
func TestDeprecatedOnlyWhenMarked(t *testing.T) {
	d := newDocs(nil, nil)
	for _, c := range []struct {
		desc       string
		deprecated bool
		want       string
	}{
		{"Deprecated: use ttlMs.", false, "TTL: Its description calls it deprecated: use ttlMs."},
		{"The time to live.\n\nDeprecated: use ttlMs.", false, "TTL is the time to live.\n\nIts description calls it deprecated: use ttlMs."},
		{"DEPRECATED since 2025.", false, "TTL: Its description calls it deprecated since 2025."},
		{"Deprecatedly named.", false, "TTL: Deprecatedly named."},
		{"The time to live.", true, "TTL is the time to live.\n\nDeprecated: the schema marks TTL deprecated."},
		{"", true, "Deprecated: the schema marks TTL deprecated."},
	} {
		got := d.doc("TTL", c.desc, c.deprecated)
		if got != c.want {
			t.Errorf("doc(%q, %v) = %q, want %q", c.desc, c.deprecated, got, c.want)
		}
		marks := 0
		for _, para := range strings.Split(got, "\n\n") {
			if strings.HasPrefix(para, "Deprecated:") {
				marks++
			}
		}
		if want := map[bool]int{false: 0, true: 1}[c.deprecated]; marks != want {
			t.Errorf("doc(%q, %v) = %q: %d \"Deprecated:\" paragraphs, want %d", c.desc, c.deprecated, got, marks, want)
		}
	}
}
