package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpx-dev/mcpx/gen/load"
	"github.com/mcpx-dev/mcpx/schemas"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestGeneratedIsFresh regenerates in memory and compares with generated/.
func TestGeneratedIsFresh(t *testing.T) {
	outs, _, err := Generate(schemas.SourceDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(schemas.SourceDir())
	for _, o := range outs {
		have, err := os.ReadFile(filepath.Join(root, o.Path))
		if err != nil {
			t.Errorf("%s: %v; run `make generate` and commit", o.Path, err)
			continue
		}
		if !bytes.Equal(have, o.Src) {
			t.Errorf("%s is stale: run `make generate` and commit\n%s", o.Path, firstDiff(string(have), string(o.Src)))
		}
	}
}

// TestGenerateIsDeterministic: two runs give identical bytes.
func TestGenerateIsDeterministic(t *testing.T) {
	a, _, err := Generate(schemas.SourceDir())
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := Generate(schemas.SourceDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Src, b[i].Src) {
			t.Fatalf("%s differs between two runs", a[i].Path)
		}
	}
}

// TestAlteredSchemaFails: the generator refuses a schema file whose sha256
// is not the pinned one, and a missing one, naming the revision.
func TestAlteredSchemaFails(t *testing.T) {
	m, _ := schemas.Load()
	for _, tc := range []struct {
		name   string
		mutate func(path string)
		want   error
	}{
		{"altered", func(p string) { os.WriteFile(p, []byte(`{"$defs":{}}`), 0o644) }, schemas.ErrAltered},
		{"missing", func(p string) { os.Remove(p) }, schemas.ErrMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, s := range m.All() {
				b, err := schemas.Read(schemas.SourceDir(), s)
				if err != nil {
					t.Fatal(err)
				}
				os.MkdirAll(filepath.Join(dir, filepath.Dir(s.File)), 0o755)
				os.WriteFile(filepath.Join(dir, s.File), b, 0o644)
			}
			tc.mutate(filepath.Join(dir, m.Schemas[2].File))
			_, _, err := Generate(dir)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), m.Schemas[2].ID) {
				t.Fatalf("Generate with a %s %s schema: err = %v, want %v naming the revision", tc.name, m.Schemas[2].ID, err, tc.want)
			}
		})
	}
}

// The golden cases: testdata/<case>.txtar holds a tiny modern schema
// (new.json), a tiny legacy one (old.json), an overlay (overlay.json) and
// either the expected Go (-- want/<path> --) or the expected error
// (-- error --). Refresh with go test ./gen -update.
func TestGolden(t *testing.T) {
	cases, _ := filepath.Glob("testdata/*.txtar")
	if len(cases) == 0 {
		t.Fatal("no golden cases under gen/testdata")
	}
	for _, file := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			in := map[string][]byte{}
			for _, f := range ar.Files {
				in[f.Name] = f.Data
			}
			got, err := generateTiny(in["new.json"], in["old.json"], in["overlay.json"])
			if want, ok := in["error"]; ok { // each line of it must be in the error
				for _, l := range strings.Split(strings.TrimSpace(string(want)), "\n") {
					if err == nil || !strings.Contains(err.Error(), strings.TrimSpace(l)) {
						t.Fatalf("error = %v, want one containing %q", err, strings.TrimSpace(l))
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keep []txtar.File
			for _, f := range ar.Files {
				if !strings.HasPrefix(f.Name, "want/") {
					keep = append(keep, f)
				}
			}
			for _, g := range got {
				keep = append(keep, txtar.File{Name: "want/" + g.Path, Data: g.Src})
			}
			if *update {
				ar.Files = keep
				os.WriteFile(file, txtar.Format(ar), 0o644)
				return
			}
			for _, g := range got {
				want := in["want/"+g.Path]
				if diff := cmp.Diff(string(want), string(g.Src)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", g.Path, diff)
				}
			}
		})
	}
}

// generateTiny runs the generator on a two-revision world.
func generateTiny(newSchema, oldSchema, overlay []byte) ([]Output, error) {
	return generateWorld([]tinyRev{{"2030-01-01", schemas.Modern, newSchema}, {"2020-01-01", schemas.Legacy, oldSchema}}, overlay)
}

// tinyRev is one revision of a golden world.
type tinyRev struct {
	id     string
	era    schemas.Era
	schema []byte
}

// generateWorld runs the generator on revisions, newest first.
func generateWorld(revs []tinyRev, overlay []byte) ([]Output, error) {
	set := &load.Set{}
	for _, r := range revs {
		s := schemas.Schema{ID: r.id, Era: r.era, Commit: strings.Repeat("0", 40), SHA256: schemas.Sum(r.schema), File: r.id + ".json"}
		c, err := load.Compile(s, r.schema)
		if err != nil {
			return nil, err
		}
		set.Revisions = append(set.Revisions, c)
	}
	outs, _, err := Render(set, overlay)
	return outs, err
}

// TestExtensionRangeInherited: an extension whose "extends" is an open
// range ("2030-01-01..") reaches a newer revision added later; one that
// names a single revision does not.
func TestExtensionRangeInherited(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/rename-drop-fallback.txtar")
	if err != nil {
		t.Fatal(err)
	}
	in := map[string][]byte{}
	for _, f := range ar.Files {
		in[f.Name] = f.Data
	}
	ext := []byte(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": {
  "PokeRequest": {"type": "object", "properties": {"method": {"const": "x/poke", "type": "string"}, "params": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}, "required": ["method", "params"]},
  "PokeResult": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
}}`)
	for _, c := range []struct {
		extends string
		want    map[string]bool // revision package -> has the extension's method
	}{
		{"2030-01-01..", map[string]bool{"v20310101": true, "v20300101": true, "v20200101": false}},
		{"2030-01-01", map[string]bool{"v20310101": false, "v20300101": true, "v20200101": false}},
	} {
		set := &load.Set{}
		for _, r := range []tinyRev{{"2031-01-01", schemas.Modern, in["new.json"]}, {"2030-01-01", schemas.Modern, in["new.json"]}, {"2020-01-01", schemas.Legacy, in["old.json"]}} {
			s := schemas.Schema{ID: r.id, Era: r.era, Commit: strings.Repeat("0", 40), SHA256: schemas.Sum(r.schema), File: r.id + ".json"}
			rev, err := load.Compile(s, r.schema)
			if err != nil {
				t.Fatal(err)
			}
			set.Revisions = append(set.Revisions, rev)
		}
		es := schemas.Schema{ID: "example.com/x", Extends: c.extends, Commit: strings.Repeat("0", 40), SHA256: schemas.Sum(ext), File: "ext.json"}
		e, err := load.Compile(es, ext)
		if err != nil {
			t.Fatal(err)
		}
		set.Extensions = append(set.Extensions, e)
		// The extension's request needs a route like any other.
		overlay := bytes.Replace(in["overlay.json"], []byte("\n]}"), []byte(`,
  {"kind": "route", "at": "x/poke", "by": "local", "why": "the extension's request, answered locally in this test"}
]}`), 1)
		outs, _, err := Render(set, overlay)
		if err != nil {
			t.Fatalf("extends %q: %v", c.extends, err)
		}
		for _, o := range outs {
			for pkg, want := range c.want {
				if o.Path == "generated/wire/"+pkg+"/types_gen.go" {
					if got := bytes.Contains(o.Src, []byte("type PokeRequestParams struct")); got != want {
						t.Errorf("extends %q: %s has the extension's params: %v, want %v", c.extends, pkg, got, want)
					}
				}
			}
		}
	}
}

// TestNewRevisionTouchesOnlyItsFiles: adding a revision that changes
// nothing (a copy of the newest) leaves every other revision's package
// byte-identical (its header names only its own schema) and the hub's
// types unchanged but for the header, which names every schema (doc
// comments use open ranges: "Since X", nothing for every revision).
func TestNewRevisionTouchesOnlyItsFiles(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/rename-drop-fallback.txtar")
	if err != nil {
		t.Fatal(err)
	}
	in := map[string][]byte{}
	for _, f := range ar.Files {
		in[f.Name] = f.Data
	}
	before, err := generateTiny(in["new.json"], in["old.json"], in["overlay.json"])
	if err != nil {
		t.Fatal(err)
	}
	after, err := generateWorld([]tinyRev{{"2031-01-01", schemas.Modern, in["new.json"]}, {"2030-01-01", schemas.Modern, in["new.json"]}, {"2020-01-01", schemas.Legacy, in["old.json"]}}, in["overlay.json"])
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for _, o := range after {
		got[o.Path] = o.Src
	}
	if got["generated/wire/v20310101/types_gen.go"] == nil {
		t.Fatal("no package for the added revision")
	}
	checked := 0
	for _, o := range before {
		switch {
		case strings.HasPrefix(o.Path, "generated/wire/"), o.Path == "generated/mcp/doc_gen.go":
			if !bytes.Equal(got[o.Path], o.Src) {
				t.Errorf("%s changed when a revision was added:\n%s", o.Path, firstDiff(string(o.Src), string(got[o.Path])))
			}
			checked++
		case o.Path == "generated/mcp/types_gen.go":
			a, b := strings.SplitN(string(o.Src), "\n", 3), strings.SplitN(string(got[o.Path]), "\n", 3)
			if a[2] != b[2] {
				t.Errorf("%s changed beyond its header when a revision was added:\n%s", o.Path, firstDiff(a[2], b[2]))
			}
			if a[1] == b[1] {
				t.Errorf("%s: the header does not name the added schema: %s", o.Path, b[1])
			}
			checked++
		}
	}
	if checked < 6 {
		t.Fatalf("checked %d files, want the hub's types, its doc and two files per older revision", checked)
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  have: %s\n  want: %s", i+1, al[i], bl[i])
		}
	}
	return "lengths differ"
}

// TestOverlayEditLeavesWireFiles pins that a revision's package does not
// carry the overlay's digest: an overlay change that changes none of its
// content (here only a why) leaves it byte-identical, so the overlay
// entries a new revision brings do not rewrite every older package, while
// the hub's header follows the overlay.
func TestOverlayEditLeavesWireFiles(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/rename-drop-fallback.txtar")
	if err != nil {
		t.Fatal(err)
	}
	in := map[string][]byte{}
	for _, f := range ar.Files {
		in[f.Name] = f.Data
	}
	edited := bytes.Replace(in["overlay.json"], []byte(`"why": "renamed"`), []byte(`"why": "renamed, said otherwise"`), 1)
	if bytes.Equal(edited, in["overlay.json"]) {
		t.Fatal("the overlay was not edited")
	}
	before, err := generateTiny(in["new.json"], in["old.json"], in["overlay.json"])
	if err != nil {
		t.Fatal(err)
	}
	after, err := generateTiny(in["new.json"], in["old.json"], edited)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for _, o := range after {
		got[o.Path] = o.Src
	}
	wires := 0
	for _, o := range before {
		same := bytes.Equal(got[o.Path], o.Src)
		switch {
		case strings.HasPrefix(o.Path, "generated/wire/"):
			wires++
			if !same {
				t.Errorf("%s changed with an overlay edit that changes none of its content:\n%s", o.Path, firstDiff(string(o.Src), string(got[o.Path])))
			}
		case o.Path == "generated/mcp/types_gen.go" && same:
			t.Errorf("%s: the header does not follow the overlay's digest", o.Path)
		}
	}
	if wires < 4 {
		t.Fatalf("checked %d wire files, want two per revision", wires)
	}
}
