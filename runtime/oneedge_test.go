// Package runtime_test holds checks over the whole runtime tree.
package runtime_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyTheEdgeKnowsRevisions pins the architecture's rule: outside the
// edge and the transports no code names a revision. Revision constants
// (mcp.Rev*), the Revision type, the revision tables and the edge's
// revision helpers may appear only in runtime/edge and runtime/transport;
// anywhere else in runtime/ a handler would be branching on a revision.
func TestOnlyTheEdgeKnowsRevisions(t *testing.T) {
	allowed := []string{"edge" + string(filepath.Separator), "transport" + string(filepath.Separator)}
	forbidden := map[string]map[string]bool{
		"mcp":      {"Revision": true, "Revisions": true},
		"revision": nil, // any use of the tables
		"edge":     {"IsModern": true, "AllowsBatch": true, "Known": true, "Modern": true, "LatestLegacy": true, "Headerless": true, "Oldest": true},
	}
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		for _, a := range allowed {
			if strings.HasPrefix(path, a) {
				return nil
			}
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			names, watched := forbidden[pkg.Name]
			if watched && (names == nil || names[sel.Sel.Name] || pkg.Name == "mcp" && strings.HasPrefix(sel.Sel.Name, "Rev20")) {
				t.Errorf("%s: %s.%s: only runtime/edge and runtime/transport may name revisions", fset.Position(sel.Pos()), pkg.Name, sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no runtime file outside edge/ and transport/ was checked")
	}
}
