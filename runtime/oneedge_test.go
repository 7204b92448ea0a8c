// Package runtime_test holds checks over the whole runtime tree.
package runtime_test

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/types/typeutil"
)

// eraPredicates are edge's functions and methods that answer which era a
// revision is in; a caller would be branching on the answer.
var eraPredicates = map[string]bool{"IsModern": true, "AllowsBatch": true, "Known": true, "Modern": true, "Classify": true, "ChecksHeaders": true}

// TestOnlyTheEdgeKnowsRevisions pins the architecture's rule: outside the
// edge and the transports no code branches on a revision. The runtime is
// type-checked, so that a method call is seen for what it returns: outside
// runtime/edge and runtime/transport nothing may use an object whose type
// is or involves mcp.Revision (constants, variables, fields, functions and
// methods taking or returning one), the revision tables, or the edge's
// era predicates (edge.IsModern, Dialect.Modern, ...). A decision that
// needs the revision belongs in the edge, under a name saying what it
// decides (Dialect.CancelsByNotification). Naming one in a log line is
// not branching on it: a direct argument of a log/slog call is allowed.
func TestOnlyTheEdgeKnowsRevisions(t *testing.T) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	type finding struct {
		pos token.Position
		msg string
	}
	var found []finding
	checked := 0
	for _, p := range pkgs {
		rel := strings.TrimPrefix(p.PkgPath, module)
		if rel == "runtime/edge" || strings.HasPrefix(rel, "runtime/edge/") || strings.HasPrefix(rel, "runtime/transport/") || len(p.Syntax) == 0 {
			continue
		}
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
		checked++
		logged := loggedIdents(p)
		for id, obj := range p.TypesInfo.Uses {
			if why := revisionUse(obj); why != "" && !logged[id] {
				found = append(found, finding{p.Fset.Position(id.Pos()), id.Name + ": " + why})
			}
		}
	}
	slices.SortFunc(found, func(a, b finding) int {
		return strings.Compare(a.pos.String(), b.pos.String())
	})
	for _, f := range found {
		t.Errorf("%s: %s; only runtime/edge and runtime/transport may tell revisions apart", f.pos, f.msg)
	}
	if checked < 5 {
		t.Fatalf("%d runtime packages outside edge/ and transport/ were checked; expected them all", checked)
	}
}

// loggedIdents are the identifiers that name a direct argument of a call
// into log/slog: rev, x.Rev, d.Revision().
func loggedIdents(p *packages.Package) map[*ast.Ident]bool {
	logged := map[*ast.Ident]bool{}
	for _, f := range p.Syntax {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if fn := typeutil.Callee(p.TypesInfo, call); fn == nil || fn.Pkg() == nil || fn.Pkg().Path() != "log/slog" {
				return true
			}
			for _, arg := range call.Args {
				if c, ok := ast.Unparen(arg).(*ast.CallExpr); ok {
					arg = c.Fun
				}
				switch a := ast.Unparen(arg).(type) {
				case *ast.Ident:
					logged[a] = true
				case *ast.SelectorExpr:
					logged[a.Sel] = true
				}
			}
			return true
		})
	}
	return logged
}

// revisionUse says why using obj tells revisions apart, or "".
func revisionUse(obj types.Object) string {
	if obj == nil || obj.Pkg() == nil {
		return ""
	}
	switch path := obj.Pkg().Path(); {
	case path == module+"generated/revision":
		return "the revision tables"
	case path == module+"runtime/edge" && eraPredicates[obj.Name()]:
		if _, ok := obj.(*types.Func); ok {
			return "an era predicate of the edge"
		}
	}
	if involvesRevision(obj.Type()) {
		return "its type involves mcp.Revision (" + obj.Type().String() + ")"
	}
	return ""
}

// involvesRevision reports whether t is mcp.Revision or is built from it:
// a pointer, slice, array, map, channel, unnamed struct or function of it.
// A named type is not looked into: a type that keeps a revision to itself
// (edge.Dialect) may be passed around.
func involvesRevision(t types.Type) bool {
	switch t := types.Unalias(t).(type) {
	case *types.Named:
		if o := t.Obj(); o.Pkg() != nil && o.Pkg().Path() == module+"generated/mcp" && o.Name() == "Revision" {
			return true
		}
		for i := range t.TypeArgs().Len() {
			if involvesRevision(t.TypeArgs().At(i)) {
				return true
			}
		}
	case *types.Pointer:
		return involvesRevision(t.Elem())
	case *types.Slice:
		return involvesRevision(t.Elem())
	case *types.Array:
		return involvesRevision(t.Elem())
	case *types.Chan:
		return involvesRevision(t.Elem())
	case *types.Map:
		return involvesRevision(t.Key()) || involvesRevision(t.Elem())
	case *types.Struct:
		for i := range t.NumFields() {
			if involvesRevision(t.Field(i).Type()) {
				return true
			}
		}
	case *types.Signature:
		return involvesRevision(t.Params()) || involvesRevision(t.Results())
	case *types.Tuple:
		for i := range t.Len() {
			if involvesRevision(t.At(i).Type()) {
				return true
			}
		}
	}
	return false
}
