package agility

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpx-dev/mcpx/schemas"
)

// The harness's own parts, fast enough for -short.

func TestSyntheticID(t *testing.T) {
	for in, want := range map[string]string{"2026-07-28": "2026-12-01", "2026-12-01": "2027-05-01", "2025-11-25": "2026-04-01"} {
		got, err := syntheticID(in)
		if err != nil || got != want {
			t.Errorf("syntheticID(%s) = %q, %v; want %s", in, got, err, want)
		}
		if got <= in {
			t.Errorf("syntheticID(%s) = %s does not sort after it", in, got)
		}
	}
	if _, err := syntheticID("draft"); err == nil {
		t.Error("syntheticID(draft): no error")
	}
}

// TestDeriveSchema derives the synthetic schema from the newest fetched one
// and checks each change is there, the rest is untouched, and the result
// still compiles.
func TestDeriveSchema(t *testing.T) {
	m, err := schemas.Load()
	if err != nil {
		t.Fatal(err)
	}
	src, err := schemas.Read(schemas.SourceDir(), m.Schemas[0])
	if err != nil {
		t.Skipf("%v", err)
	}
	out, err := deriveSchema(src)
	if err != nil {
		t.Fatal(err)
	}
	var before, after struct {
		Defs map[string]map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(src, &before); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &after); err != nil {
		t.Fatal(err)
	}
	if before.Defs == nil {
		t.Skip("the newest schema keeps its definitions under \"definitions\"; this test reads $defs")
	}
	prop := func(defs map[string]map[string]any, def, member string) bool {
		p, _ := defs[def]["properties"].(map[string]any)
		_, ok := p[member]
		return ok
	}
	refs := func(defs map[string]map[string]any, union, def string) bool {
		alts, _ := defs[union]["anyOf"].([]any)
		return slices.ContainsFunc(alts, func(a any) bool { return a.(map[string]any)["$ref"] == "#/$defs/"+def })
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"Tool." + addedToolMember + " added", prop(after.Defs, "Tool", addedToolMember) && !prop(before.Defs, "Tool", addedToolMember)},
		{addedRequest + " in ClientRequest", refs(after.Defs, "ClientRequest", addedRequest)},
		{addedResult + " in ServerResult", refs(after.Defs, "ServerResult", addedResult)},
		{addedParams + " has name", prop(after.Defs, addedParams, "name")},
		{addedVariantDef + " in ContentBlock", refs(after.Defs, "ContentBlock", addedVariantDef)},
		{renamedType + "." + renamedFrom + " gone", !prop(after.Defs, renamedType, renamedFrom) && prop(before.Defs, renamedType, renamedFrom)},
		{renamedType + "." + renamedTo + " there", prop(after.Defs, renamedType, renamedTo)},
		{"nothing else added", len(after.Defs) == len(before.Defs)+4},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("derived schema: want %s", c.what)
		}
	}
	raw, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	c := schemas.NewCompiler()
	if err := c.AddResource("https://synthetic.invalid/schema.json", raw); err != nil {
		t.Fatal(err)
	}
	for _, def := range []string{addedRequest, addedResult, addedVariantDef, "Tool", renamedType, "ClientRequest"} {
		if _, err := c.Compile("https://synthetic.invalid/schema.json#/$defs/" + def); err != nil {
			t.Errorf("compile %s: %v", def, err)
		}
	}
	// A second derivation from the result is refused: it already has
	// what would be added.
	if _, err := deriveSchema(out); err == nil {
		t.Error("deriving from a schema that already has the changes: no error")
	}
}

// TestChangedGo: a changed, a new and a removed hand-written .go file are
// each reported; generated/ and other files are not.
func TestChangedGo(t *testing.T) {
	root, cp := t.TempDir(), t.TempDir()
	write := func(dir, name, body string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"same.go", "runtime/edge/changed.go", "gone.go", "generated/mcp/x_gen.go", "schemas/overlay.json"} {
		write(root, f, "package x\n")
		if f != "gone.go" {
			write(cp, f, "package x\n")
		}
	}
	write(cp, "runtime/edge/changed.go", "package x // edited\n")
	write(cp, "runtime/edge/new.go", "package x\n")
	write(cp, "generated/mcp/x_gen.go", "package x // regenerated\n")
	write(cp, "generated/wire/v1/new_gen.go", "package v1\n")
	write(cp, "schemas/overlay.json", "{}\n")
	got, err := changedGo(root, cp, []string{"same.go", "runtime/edge/changed.go", "gone.go", "generated/mcp/x_gen.go", ""})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"gone.go (gone)", "runtime/edge/changed.go (changed)", "runtime/edge/new.go (new)"}
	if !slices.Equal(got, want) {
		t.Errorf("changedGo = %q, want %q", got, want)
	}
}
