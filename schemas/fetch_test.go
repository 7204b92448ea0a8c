package schemas

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeSchemas returns two made-up entries and their contents, so the fetch
// tests need neither the real files nor the network.
func fakeSchemas() ([]Schema, map[string][]byte) {
	bodies := map[string][]byte{
		"2099-01-01": []byte(`{"title":"new"}`),
		"ext/x":      []byte(`{"title":"ext"}`),
	}
	list := []Schema{
		{ID: "2099-01-01", Era: Modern, Repository: "o/r", Commit: strings.Repeat("a", 40), Path: "schema/2099-01-01/schema.json", Mirror: "schemas/2099-01-01/schema.json", File: "2099-01-01/schema.json", SHA256: Sum(bodies["2099-01-01"])},
		{ID: "ext/x", Extends: "2099-01-01", Repository: "o/x", Commit: strings.Repeat("b", 40), Path: "schema/draft/schema.json", Mirror: "ext-x/schema.json", File: "ext-x/schema.json", SHA256: Sum(bodies["ext/x"])},
	}
	return list, bodies
}

// writeMirror lays the fake files out as a mirror.
func writeMirror(t *testing.T, list []Schema, bodies map[string][]byte) string {
	t.Helper()
	mirror := t.TempDir()
	for _, s := range list {
		p := filepath.Join(mirror, filepath.FromSlash(s.Mirror))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, bodies[s.ID], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return mirror
}

func noDownload(t *testing.T) func(string) ([]byte, error) {
	return func(url string) ([]byte, error) {
		t.Errorf("unexpected download of %s", url)
		return nil, errors.New("no network in tests")
	}
}

// files lists the regular files under dir, relative and slash-separated.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

func checkFetched(t *testing.T, dir string, list []Schema) {
	t.Helper()
	for _, s := range list {
		if _, err := Read(dir, s); err != nil {
			t.Error(err)
		}
	}
	if got := files(t, dir); len(got) != len(list) {
		t.Errorf("dir holds %v, want exactly the %d schema files (no temporaries)", got, len(list))
	}
}

func TestFetchFromMirror(t *testing.T) {
	list, bodies := fakeSchemas()
	mirror := writeMirror(t, list, bodies)
	dir := filepath.Join(t.TempDir(), "out")
	var log strings.Builder
	f := &Fetcher{Dir: dir, Mirror: mirror, Schemas: list, Download: noDownload(t), Log: &log}
	if err := f.Run(); err != nil {
		t.Fatal(err)
	}
	checkFetched(t, dir, list)
	if !strings.Contains(log.String(), mirror) {
		t.Errorf("log does not name the mirror:\n%s", log.String())
	}

	// A second run finds everything in place and touches nothing.
	f.Mirror = t.TempDir() // empty: would fail if consulted offline
	f.Offline = true
	if err := f.Run(); err != nil {
		t.Fatalf("second run: %v", err)
	}
}

func TestFetchAlteredMirror(t *testing.T) {
	list, bodies := fakeSchemas()
	mirror := writeMirror(t, list, bodies)
	bad := list[1]
	if err := os.WriteFile(filepath.Join(mirror, filepath.FromSlash(bad.Mirror)), []byte(`{"title":"tampered"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	err := (&Fetcher{Dir: dir, Mirror: mirror, Schemas: list, Download: noDownload(t)}).Run()
	if !errors.Is(err, ErrAltered) {
		t.Fatalf("Run with an altered mirror file: %v, want ErrAltered", err)
	}
	mustMention(t, err, bad.ID, bad.SHA256, Sum([]byte(`{"title":"tampered"}`)), filepath.Join(mirror, filepath.FromSlash(bad.Mirror)))
	if strings.Contains(err.Error(), list[0].ID+":") {
		t.Errorf("error blames the good entry too: %v", err)
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("a failed fetch wrote %v", got)
	}
}

func TestFetchMissingOffline(t *testing.T) {
	list, bodies := fakeSchemas()
	mirror := writeMirror(t, list[:1], bodies)
	dir := t.TempDir()
	err := (&Fetcher{Dir: dir, Mirror: mirror, Offline: true, Schemas: list, Download: noDownload(t)}).Run()
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("offline Run with a file missing from the mirror: %v, want ErrMissing", err)
	}
	mustMention(t, err, list[1].ID, list[1].SHA256)
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("a failed fetch wrote %v", got)
	}
}

func TestFetchDownloads(t *testing.T) {
	list, bodies := fakeSchemas()
	byURL := map[string][]byte{}
	for _, s := range list {
		byURL[s.URL()] = bodies[s.ID]
	}
	var got []string
	download := func(url string) ([]byte, error) {
		got = append(got, url)
		b, ok := byURL[url]
		if !ok {
			return nil, errors.New("HTTP 404 Not Found")
		}
		return b, nil
	}
	dir := t.TempDir()
	if err := (&Fetcher{Dir: dir, Schemas: list, Download: download}).Run(); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(list) {
		t.Errorf("downloaded %v, want one download per schema", got)
	}
	checkFetched(t, dir, list)

	// A mirror lacking a file falls back to downloading just that file.
	got = nil
	dir = t.TempDir()
	mirror := writeMirror(t, list[:1], bodies)
	if err := (&Fetcher{Dir: dir, Mirror: mirror, Schemas: list, Download: download}).Run(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != list[1].URL() {
		t.Errorf("downloaded %v, want only %s", got, list[1].URL())
	}
	checkFetched(t, dir, list)
}

func TestFetchDownloadFails(t *testing.T) {
	list, _ := fakeSchemas()
	dir := t.TempDir()
	download := func(url string) ([]byte, error) { return nil, errors.New("HTTP 404 Not Found") }
	err := (&Fetcher{Dir: dir, Schemas: list, Download: download}).Run()
	if err == nil {
		t.Fatal("Run succeeded with every download failing")
	}
	mustMention(t, err, list[0].ID, list[0].URL(), "404")
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("a failed fetch wrote %v", got)
	}
}

func TestFetchBadMirror(t *testing.T) {
	list, _ := fakeSchemas()
	err := (&Fetcher{Dir: t.TempDir(), Mirror: filepath.Join(t.TempDir(), "nope"), Schemas: list, Download: noDownload(t)}).Run()
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("Run with a nonexistent mirror: %v, want an error naming it", err)
	}
}

// TestFetchRealManifest runs Fetch itself on the real manifest, with
// SourceDir's verified files as the mirror.
func TestFetchRealManifest(t *testing.T) {
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	mirror := t.TempDir()
	for _, s := range m.All() {
		b, err := Read(SourceDir(), s)
		if err != nil {
			t.Fatalf("%v\n\tfix: run `make schemas`", err)
		}
		p := filepath.Join(mirror, filepath.FromSlash(s.Mirror))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := Fetch(dir, mirror, nil); err != nil {
		t.Fatal(err)
	}
	checkFetched(t, dir, m.All())
}
