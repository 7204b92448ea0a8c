package emit

import (
	"go/doc/comment"
	"slices"
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
