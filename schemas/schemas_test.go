package schemas

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestManifest(t *testing.T) {
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Schemas) != 5 {
		t.Errorf("manifest lists %d revisions, want 5", len(m.Schemas))
	}
	seen := map[string]bool{}
	files := map[string]bool{}
	for _, s := range m.All() {
		if s.ID == "" {
			t.Errorf("entry with no id: %+v", s)
			continue
		}
		if seen[s.ID] {
			t.Errorf("%s: listed twice", s.ID)
		}
		seen[s.ID] = true
		if files[s.File] {
			t.Errorf("%s: file %q used by another entry", s.ID, s.File)
		}
		files[s.File] = true
		if !hex64.MatchString(s.SHA256) {
			t.Errorf("%s: sha256 %q is not 64 lowercase hex digits", s.ID, s.SHA256)
		}
		if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(s.Commit) {
			t.Errorf("%s: commit %q is not 40 hex digits", s.ID, s.Commit)
		}
		for field, v := range map[string]string{"repository": s.Repository, "path": s.Path, "mirror": s.Mirror, "file": s.File} {
			if v == "" {
				t.Errorf("%s: no %s", s.ID, field)
			}
		}
		if filepath.IsAbs(s.File) || filepath.Clean(s.File) != filepath.FromSlash(s.File) || s.File[0] == '.' {
			t.Errorf("%s: file %q is not a clean relative path", s.ID, s.File)
		}
	}
	for _, s := range m.Schemas {
		if s.Era != Legacy && s.Era != Modern {
			t.Errorf("revision %s: era %q, want %q or %q", s.ID, s.Era, Legacy, Modern)
		}
		if s.Extends != "" {
			t.Errorf("revision %s: extends %q; only extensions extend", s.ID, s.Extends)
		}
	}
	for i := 1; i < len(m.Schemas); i++ {
		if m.Schemas[i-1].ID <= m.Schemas[i].ID {
			t.Errorf("revisions not newest first: %s before %s", m.Schemas[i-1].ID, m.Schemas[i].ID)
		}
	}
	for _, e := range m.Extensions {
		if e.Era != "" {
			t.Errorf("extension %s: has era %q", e.ID, e.Era)
		}
		if len(m.Schemas) > 0 && !e.ExtendsRevision(m.Schemas[0].ID) {
			t.Errorf("extension %s: extends %q, which leaves out the newest revision %s", e.ID, e.Extends, m.Schemas[0].ID)
		}
	}
	if s, ok := m.Lookup("2025-06-18"); !ok || s.Era != Legacy {
		t.Errorf("Lookup(2025-06-18) = %+v, %v", s, ok)
	}
	if _, ok := m.Lookup("1999-01-01"); ok {
		t.Error("Lookup found a revision that is not listed")
	}
}

// TestSourceFiles checks the fetched files the generator reads. CI always
// runs `make schemas` first, so a failure here is real.
func TestSourceFiles(t *testing.T) {
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range m.All() {
		if _, err := Read(SourceDir(), s); err != nil {
			t.Errorf("%v\n\tfix: run `make schemas`", err)
		}
	}
}

// copyFirst copies the first manifest entry's real file from SourceDir into
// a temporary directory and returns that directory and the entry.
func copyFirst(t *testing.T) (string, Schema) {
	t.Helper()
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	s := m.Schemas[0]
	b, err := Read(SourceDir(), s)
	if err != nil {
		t.Fatalf("%v\n\tfix: run `make schemas`", err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, filepath.FromSlash(s.File))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, s
}

func TestRead(t *testing.T) {
	dir, s := copyFirst(t)
	b, err := Read(dir, s)
	if err != nil {
		t.Fatal(err)
	}
	if Sum(b) != s.SHA256 {
		t.Fatalf("Read returned bytes with sha256 %s, want %s", Sum(b), s.SHA256)
	}
}

func TestReadMissing(t *testing.T) {
	dir, s := copyFirst(t)
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(s.File))); err != nil {
		t.Fatal(err)
	}
	_, err := Read(dir, s)
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("Read of a missing file: %v, want ErrMissing", err)
	}
	if errors.Is(err, ErrAltered) {
		t.Errorf("missing file also reported as altered: %v", err)
	}
	mustMention(t, err, s.ID, "make schemas")
}

func TestReadAltered(t *testing.T) {
	dir, s := copyFirst(t)
	path := filepath.Join(dir, filepath.FromSlash(s.File))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Read(dir, s)
	if !errors.Is(err, ErrAltered) {
		t.Fatalf("Read of an altered file: %v, want ErrAltered", err)
	}
	mustMention(t, err, s.ID, s.SHA256, Sum(b), "make schemas")
}

func mustMention(t *testing.T, err error, want ...string) {
	t.Helper()
	for _, w := range want {
		if !regexp.MustCompile(regexp.QuoteMeta(w)).MatchString(err.Error()) {
			t.Errorf("error does not mention %q: %v", w, err)
		}
	}
}
