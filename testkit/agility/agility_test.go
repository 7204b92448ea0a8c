package agility

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/schemas"
	"github.com/mcpx-dev/mcpx/testkit/testbin"
)

// TestNewRevision adds a synthetic revision to a copy of the repository
// with data only and checks that the copy generates, builds, vets and
// serves it beside the real revisions, and that no hand-written Go had to
// change (see the package documentation). Each step is a subtest named
// after it; a failed step says which command failed and shows the first
// lines of its output, and the steps that need it are skipped, saying so.
//
//	go test -run TestNewRevision -v ./testkit/agility/
//
// MCPX_AGILITY_KEEP=1 keeps the copy and prints where it is.
func TestNewRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("copies, generates and builds the repository: not with -short")
	}
	if os.Getenv(envRevision) != "" {
		t.Skip("already inside a copy made by TestNewRevision")
	}
	root, err := testbin.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	m, err := schemas.Load()
	if err != nil {
		t.Fatal(err)
	}
	newest := m.Schemas[0]
	syn, err := syntheticID(newest.ID)
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	if os.Getenv("MCPX_AGILITY_KEEP") != "" {
		if base, err = os.MkdirTemp("", "mcpx-agility-"); err != nil {
			t.Fatal(err)
		}
		t.Logf("the copy stays in %s", base)
	}
	cp := filepath.Join(base, "repo")
	mirror := filepath.Join(base, "mirror")
	t.Logf("synthetic revision %s, derived from %s, in %s", syn, newest.ID, cp)

	failed := "" // the first step that failed; later steps that need it skip
	step := func(name string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			if failed != "" {
				t.Skipf("skipped: step %q failed", failed)
			}
			f(t)
		})
		if failed == "" && t.Failed() {
			failed = name
		}
	}
	step("1-copy", func(t *testing.T) { copyRepo(t, root, cp, m) })
	step("2-derive", func(t *testing.T) { addRevision(t, root, cp, mirror, newest, syn) })
	step("3-generate-build-vet", func(t *testing.T) {
		env := []string{schemas.MirrorEnv + "=" + mirror}
		run(t, "fetch the schemas (make schemas)", cp, env, 2*time.Minute, "go", "run", "./schemas/fetch", "-offline")
		out := run(t, "generate (make generate)", cp, env, 4*time.Minute, "go", "generate", "./...")
		if s := strings.TrimSpace(out); s != "" {
			t.Logf("the generator said:\n%s", head(s, 40))
		}
		run(t, "build", cp, nil, 4*time.Minute, "go", "build", "./...")
		run(t, "vet", cp, nil, 4*time.Minute, "go", "vet", "./...")
	})
	t.Run("4-serve", func(t *testing.T) {
		if failed != "" {
			t.Skipf("skipped: step %q failed", failed)
		}
		// The copy's tests read the specification's examples from the
		// mirror too (TestExamplesRoundTrip): the synthetic mirror holds
		// the real mirror's example files beside the schemas.
		env := []string{envRevision + "=" + syn, schemas.MirrorEnv + "=" + mirror}
		// Each in its own subtest, so every failure is seen at once.
		for _, p := range []struct{ name, pkg, run string }{
			// The check written for this: the synthetic revision and the
			// previous modern one side by side through the gateway.
			{"serve-side-by-side", "./testkit/agility/", "^TestServeNewRevision$"},
			// Tests that take their revisions from the tables.
			{"conversions", "./testkit/convtest/", ""},
			{"edge", "./runtime/edge/", ""},
			{"gateway-matrix", "./runtime/gatewaytest/", "^TestMatrix$"},
			{"generated-is-fresh", "./gen/", "^TestGeneratedIsFresh$"},
		} {
			t.Run(p.name, func(t *testing.T) {
				args := []string{"test", "-count=1", p.pkg}
				if p.run != "" {
					args = append(args, "-run", p.run)
				}
				out := run(t, "the copy's tests", cp, env, 6*time.Minute, "go", args...)
				if testing.Verbose() {
					t.Logf("%s", head(out, 10))
				}
			})
		}
		t.Run("mcpx-revisions", func(t *testing.T) {
			out := run(t, "mcpx revisions", cp, nil, 2*time.Minute, "go", "run", "./cmd/mcpx", "revisions", "--from", newest.ID, "--to", syn)
			// A rename is printed as one (issue 11): both spellings are
			// named, and neither as a member added or removed.
			both := strings.Contains(out, renamedFrom) && strings.Contains(out, renamedTo)
			var split []string
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "+ "+renamedTo) || strings.Contains(l, "- "+renamedFrom) {
					split = append(split, strings.TrimSpace(l))
				}
			}
			if !both || len(split) > 0 {
				t.Errorf("mcpx revisions --from %s --to %s does not print the rename %s -> %s as a rename (%s):\n%s", newest.ID, syn, renamedFrom, renamedTo, strings.Join(split, "; "), head(out, 60))
			}
		})
	})
	// Always, even when an earlier step failed: what the copy's Go differs
	// in is what a maintainer would have had to write.
	t.Run("5-no-hand-written-go", func(t *testing.T) {
		if _, err := os.Stat(cp); err != nil {
			t.Skip("skipped: there is no copy")
		}
		out := run(t, "list the repository's Go files", root, nil, time.Minute, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "*.go")
		changed, err := changedGo(root, cp, strings.Split(out, "\x00"))
		if err != nil {
			t.Fatal(err)
		}
		if len(changed) > 0 {
			t.Errorf("%d hand-written .go files (outside generated/) differ from the repository; a new revision must need none:\n  %s", len(changed), strings.Join(changed, "\n  "))
		}
	})
}

// copyRepo copies the files git tracks (and those it would track: new,
// not ignored) from root to dst, with the fetched schema files, which are
// ignored, and checks they are there and current.
func copyRepo(t *testing.T, root, dst string, m *schemas.Manifest) {
	out := run(t, "list the repository's files", root, nil, time.Minute, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	for _, s := range m.All() {
		if _, err := schemas.Read(schemas.SourceDir(), s); err != nil {
			t.Fatalf("the repository's schema files are not fetched (run `make schemas`): %v", err)
		}
		files = append(files, filepath.ToSlash(filepath.Join("schemas", s.File)))
	}
	n := 0
	for _, f := range files {
		src, to := filepath.Join(root, filepath.FromSlash(f)), filepath.Join(dst, filepath.FromSlash(f))
		fi, err := os.Lstat(src)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet in git
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				t.Fatal(err)
			}
			err = os.Symlink(target, to)
			if err != nil {
				t.Fatal(err)
			}
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(to, b, fi.Mode().Perm()); err != nil {
				t.Fatal(err)
			}
		default:
			continue // a submodule or other non-file
		}
		n++
	}
	t.Logf("copied %d files", n)
}

// addRevision derives the synthetic revision syn from newest in the copy
// cp and adds it as a maintainer would: the schema file into a mirror,
// a manifest line (its sha256, mirror path and file name) and overlay
// entries. The copy's fetched schema files are moved into the mirror too,
// so that step 3's `make schemas` fetches and verifies every file.
func addRevision(t *testing.T, root, cp, mirror string, newest schemas.Schema, syn string) {
	if newest.Era != schemas.Modern {
		t.Fatalf("the newest revision, %s, is of era %q; the synthetic revision is derived from a modern one", newest.ID, newest.Era)
	}
	dir := filepath.Join(cp, "schemas")
	src, err := schemas.Read(dir, newest)
	if err != nil {
		t.Fatal(err)
	}
	body, err := deriveSchema(src)
	if err != nil {
		t.Fatalf("deriving %s from %s: %v", syn, newest.ID, err)
	}

	// The manifest line: the newest's, with this revision's id, file,
	// mirror path and sha256. Its repository, commit and path name no
	// real file, so a fetch without the mirror fails on it, as it should.
	var entries struct {
		Schemas []map[string]any `json:"schemas"`
	}
	man := filepath.Join(dir, "manifest.json")
	manText, err := os.ReadFile(man)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(manText, &entries); err != nil || len(entries.Schemas) == 0 {
		t.Fatalf("schemas/manifest.json: %v", err)
	}
	line := entries.Schemas[0]
	line["id"] = syn
	line["era"] = string(schemas.Modern)
	line["repository"] = "mcpx-dev/synthetic-revision"
	line["commit"] = strings.Repeat("0", 40)
	line["path"] = "schema/" + syn + "/schema.json"
	line["mirror"] = "synthetic/" + syn + "/schema.json"
	line["file"] = syn + "/schema.json"
	line["sha256"] = schemas.Sum(body)
	manText = insertLine(t, manText, `"schemas": [`, line)

	// Overlay entries, data only.
	var overlay []any
	overlay = append(overlay, map[string]any{
		// The hub member takes the new spelling, the revisions up to the
		// newest real one keep the old, and goName keeps the hub's Go
		// field as it was, so hand-written Go that uses it still builds.
		// DEPENDENCY (branch gen): goName, and the generator failing on a
		// member dropped with no rename; on main goName is ignored and the
		// Go field follows the new spelling (no hand-written Go uses it).
		"kind": "rename", "at": renamedType + "." + renamedTo, "revisions": ".." + newest.ID, "wire": renamedFrom,
		"goName": schemas.GoName(renamedFrom),
		"why":    "synthetic (testkit/agility): " + syn + " renamed " + renamedFrom + " to " + renamedTo,
	})
	if slices.Contains(schemas.OverlayKinds, "route") {
		// DEPENDENCY (branch dispatch): the "route" kind. tools/validate
		// names a tool, so the gateway forwards it to the upstream that
		// owns the tool, and refuses it for one whose revision lacks it.
		overlay = append(overlay, map[string]any{
			"kind": "route", "at": addedMethod, "by": "name", "space": "tool", "fallback": "refuse",
			"why": "synthetic (testkit/agility): tools/validate goes to the upstream whose tool it names",
		})
	} else {
		t.Logf("the overlay has no \"route\" kind (branch dispatch): no route for %s is added, so the gateway cannot forward it", addedMethod)
	}
	ov := filepath.Join(dir, "overlay.json")
	ovText, err := os.ReadFile(ov)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range slices.Backward(overlay) {
		ovText = insertLine(t, ovText, `"entries": [`, e)
	}
	if _, err := schemas.ParseOverlay(ovText); err != nil {
		t.Fatalf("the copy's overlay after adding the entries: %v", err)
	}

	// The mirror: every real schema file at its mirror path (moved out of
	// the copy) and the synthetic one.
	m, err := schemas.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range m.All() {
		from := filepath.Join(dir, filepath.FromSlash(s.File))
		to := filepath.Join(mirror, filepath.FromSlash(s.Mirror))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(from, to); err != nil {
			t.Fatal(err)
		}
	}
	// The specification's examples (not fetched with the schemas), linked
	// from the real mirror when it has them, so that the copy's tests
	// find them exactly where the repository's own do.
	if real := schemas.DefaultMirror(); real != "" {
		examples, _ := filepath.Glob(filepath.Join(real, "schemas", "*", "examples"))
		for _, from := range examples {
			rel, err := filepath.Rel(real, from)
			if err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(mirror, rel)
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(from, link); err != nil {
				t.Fatal(err)
			}
		}
	}
	to := filepath.Join(mirror, "synthetic", syn, "schema.json")
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, b := range map[string][]byte{to: body, man: manText, ov: ovText} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("schemas/manifest.json gains:\n%s", lineJSON(t, line))
	for _, e := range overlay {
		t.Logf("schemas/overlay.json gains:\n%s", lineJSON(t, e))
	}
}

// insertLine inserts v, as one line of JSON followed by a comma, on the
// line after the one holding anchor: a new first entry of a list written
// one entry a line, as manifest.json and overlay.json are. The result must
// still be JSON.
func insertLine(t *testing.T, text []byte, anchor string, v any) []byte {
	t.Helper()
	i := bytes.Index(text, []byte(anchor))
	if i < 0 {
		t.Fatalf("no %s in the file to insert after", anchor)
	}
	nl := bytes.IndexByte(text[i:], '\n')
	if nl < 0 {
		t.Fatalf("nothing after %s", anchor)
	}
	at := i + nl + 1
	indent := "    "
	if rest := text[at:]; len(rest) > 0 {
		indent = string(rest[:len(rest)-len(bytes.TrimLeft(rest, " \t"))])
	}
	out := slices.Concat(text[:at], []byte(indent+lineJSON(t, v)+",\n"), text[at:])
	if !json.Valid(out) {
		t.Fatalf("inserting after %s left invalid JSON", anchor)
	}
	return out
}

func lineJSON(t *testing.T, v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

// changedGo lists the .go files outside generated/ that are new in cp,
// differ from root's, or are gone from cp while listed in rootGo (root's
// Go files, as git lists them).
func changedGo(root, cp string, rootGo []string) ([]string, error) {
	var changed []string
	seen := map[string]bool{}
	err := filepath.WalkDir(cp, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(cp, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "generated" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		seen[rel] = true
		mine, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		orig, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			changed = append(changed, rel+" (new)")
		case err != nil:
			return err
		case !bytes.Equal(mine, orig):
			changed = append(changed, rel+" (changed)")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, f := range rootGo {
		if f == "" || strings.HasPrefix(f, "generated/") || seen[f] {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(f))); err == nil {
			changed = append(changed, f+" (gone)")
		}
	}
	slices.Sort(changed)
	return changed, nil
}

// run runs a command in dir with env added, within d, and returns its
// combined output. On failure it fails t (the step), naming what the
// command was for, the command, and the first lines of its output.
func run(t *testing.T, what, dir string, env []string, d time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	// The toolchain running this test, and the module's go.sum as it is.
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=readonly")
	cmd.Env = append(cmd.Env, env...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("no result within %s", d)
	}
	if err != nil {
		t.Fatalf("%s: `%s %s` (in %s) failed: %v\nfirst lines of its output:\n%s", what, name, strings.Join(args, " "), dir, err, head(firstFailure(string(out)), 40))
	}
	t.Logf("%s: `%s %s` ok in %s", what, name, strings.Join(args, " "), time.Since(start).Round(100*time.Millisecond))
	return string(out)
}

// firstFailure starts go test's output at its first failure, where there
// is one, so that the lines shown are the ones that matter.
func firstFailure(out string) string {
	for _, mark := range []string{"--- FAIL", "panic:"} {
		if i := strings.Index(out, mark); i >= 0 {
			return out[i:]
		}
	}
	return out
}

// head is the first n lines of s, each cut at 400 bytes.
func head(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	more := len(lines) - n
	lines = lines[:min(n, len(lines))]
	for i, l := range lines {
		if len(l) > 400 {
			lines[i] = l[:400] + " ...(cut)\n"
		}
	}
	out := strings.Join(lines, "")
	if more > 0 {
		out += fmt.Sprintf("... (%d more lines)\n", more)
	}
	return out
}
