// Command mcpx-gen generates mcpx's hub types, per-revision wire types,
// converters and revision tables from the pinned JSON Schemas.
//
// It reads schemas/manifest.json and schemas/overlay.json (embedded by
// package schemas) and the schema files `make schemas` fetched, and
// rewrites every *_gen.go file under -out wholesale, so the output of a type
// that no longer exists disappears. With -check it writes nothing and fails
// if the files on disk differ from what it would write.
//
//	go run ./gen            (what `go generate ./...` runs)
//	go run ./gen -check     (CI: is generated/ fresh?)
package main

//go:generate go run . -out ../generated

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcpx-dev/mcpx/gen/emit"
	"github.com/mcpx-dev/mcpx/gen/load"
	"github.com/mcpx-dev/mcpx/gen/model"
	"github.com/mcpx-dev/mcpx/schemas"
	"golang.org/x/tools/imports"
)

func main() {
	out := flag.String("out", filepath.Join(filepath.Dir(schemas.SourceDir()), "generated"), "the generated/ directory to write")
	dir := flag.String("schemas", schemas.SourceDir(), "directory holding the fetched schema files")
	check := flag.Bool("check", false, "write nothing; fail if -out differs from what would be written")
	dump := flag.Bool("dump", false, "print the merged model and exit (for debugging the generator)")
	flag.Parse()
	if err := run(*out, *dir, *check, *dump); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(out, dir string, check, dump bool) error {
	files, hub, err := Generate(dir)
	if err != nil {
		return err
	}
	if dump {
		hub.Dump(os.Stdout)
		return nil
	}
	want := map[string][]byte{}
	for _, f := range files {
		want[filepath.Join(out, strings.TrimPrefix(f.Path, "generated/"))] = f.Src
	}
	have := map[string][]byte{}
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "_gen.go") {
			b, _ := os.ReadFile(p)
			have[p] = b
		}
		return nil
	})
	var stale []string
	for p, b := range want {
		if !bytes.Equal(have[p], b) {
			stale = append(stale, p)
		}
	}
	for p := range have {
		if _, ok := want[p]; !ok {
			stale = append(stale, p)
		}
	}
	sort.Strings(stale)
	if check {
		if len(stale) > 0 {
			return fmt.Errorf("mcpx-gen: generated/ is stale (%s); run `make generate` and commit", strings.Join(stale, ", "))
		}
		return nil
	}
	for p := range have {
		if _, ok := want[p]; !ok {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	for p, b := range want {
		if bytes.Equal(have[p], b) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Output is one formatted generated file.
type Output struct {
	Path string // relative to the repository root
	Src  []byte
}

// Generate loads the pinned schemas from dir and renders every file.
func Generate(dir string) ([]Output, *model.Hub, error) {
	set, err := load.All(dir)
	if err != nil {
		return nil, nil, err
	}
	return Render(set, schemas.OverlayJSON())
}

// Render builds the model of set with the overlay and renders every file,
// formatted. It fails on an overlay entry that matched nothing.
func Render(set *load.Set, overlay []byte) ([]Output, *model.Hub, error) {
	o, err := model.ParseOverlay(overlay)
	if err != nil {
		return nil, nil, err
	}
	hub, err := model.Build(set, o)
	if err != nil {
		return nil, nil, err
	}
	routes, err := hub.Routes()
	if err != nil {
		return nil, nil, err
	}
	files := emit.Files(hub, provenance(set, overlay))
	methods, err := emit.Methods(hub, routes, provenance(set, overlay))
	if err != nil {
		return nil, nil, err
	}
	files = append(files, methods)
	if un := o.Unused(); len(un) > 0 {
		return nil, nil, fmt.Errorf("%s", strings.Join(un, "\n"))
	}
	var outs []Output
	for _, f := range files {
		var buf bytes.Buffer
		if err := f.F.Render(&buf); err != nil {
			return nil, nil, fmt.Errorf("mcpx-gen: render %s: %w", f.Path, err)
		}
		src, err := imports.Process(f.Path, buf.Bytes(), &imports.Options{Comments: true, TabIndent: true, TabWidth: 8, FormatOnly: true})
		if err != nil {
			return nil, nil, fmt.Errorf("mcpx-gen: format %s: %w", f.Path, err)
		}
		outs = append(outs, Output{f.Path, src})
	}
	return outs, hub, nil
}

// provenance names every input by id, commit and hash, without dates or tool
// versions, so a clean regeneration is byte-identical.
// The hub's files name every input; each revision's package names only its
// own (emit.Provenance).
func provenance(set *load.Set, overlay []byte) string {
	var ss []schemas.Schema
	for _, r := range append(append([]*load.Revision{}, set.Revisions...), set.Extensions...) {
		ss = append(ss, r.Schema)
	}
	return emit.Provenance(ss, schemas.Sum(overlay))
}
