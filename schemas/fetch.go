package schemas

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// MirrorEnv names the environment variable that points [DefaultMirror] at a
// local mirror of the schema files.
const MirrorEnv = "MCPX_SCHEMA_MIRROR"

// maxDownload bounds a downloaded schema file; the real ones are well under
// a megabyte.
const maxDownload = 64 << 20

// DefaultMirror is the mirror `make schemas` uses: $MCPX_SCHEMA_MIRROR when
// set, else ../shared/spec relative to the repository root when that
// directory exists, else "" (no mirror: download).
func DefaultMirror() string {
	if m := os.Getenv(MirrorEnv); m != "" {
		return m
	}
	dir := filepath.Join(filepath.Dir(SourceDir()), "..", "shared", "spec")
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return filepath.Clean(dir)
	}
	return ""
}

// Fetcher puts the pinned schema files into Dir. Each file comes from the
// local Mirror when it has it, else from its pinned URL through Download.
// Every file is checked against its sha256 before anything is written, so a
// failed fetch leaves Dir as it was.
type Fetcher struct {
	Dir     string // destination, normally [SourceDir]
	Mirror  string // local mirror directory; "" for none
	Offline bool   // never download: every file must come from Mirror

	// Schemas to fetch; nil means every entry of the embedded manifest.
	Schemas []Schema
	// Download returns the body at url; nil means [HTTPDownload].
	Download func(url string) ([]byte, error)
	// Log receives one line per file; nil discards.
	Log io.Writer
}

// Fetch fetches every schema in the embedded manifest into dir, from mirror
// when it has the file, else from the pinned URL.
func Fetch(dir, mirror string, log io.Writer) error {
	return (&Fetcher{Dir: dir, Mirror: mirror, Log: log}).Run()
}

// Run fetches, verifies and then writes every schema. All problems are
// reported together; if there is any, nothing is written.
func (f *Fetcher) Run() error {
	log := f.Log
	if log == nil {
		log = io.Discard
	}
	download := f.Download
	if download == nil {
		download = HTTPDownload
	}
	list := f.Schemas
	if list == nil {
		m, err := Load()
		if err != nil {
			return err
		}
		list = m.All()
	}
	if f.Mirror != "" {
		if fi, err := os.Stat(f.Mirror); err != nil || !fi.IsDir() {
			return fmt.Errorf("schema mirror %s is not a directory (set -mirror or $%s to a copy of the spec files, or to \"\" to download)", f.Mirror, MirrorEnv)
		}
	} else if f.Offline {
		return errors.New("offline fetch needs a mirror (set -mirror or $" + MirrorEnv + ")")
	}

	type fetched struct {
		s    Schema
		body []byte
	}
	var (
		todo []fetched
		errs []error
	)
	for _, s := range list {
		if s.File == "" || s.SHA256 == "" {
			errs = append(errs, fmt.Errorf("schema %s: manifest entry has no file or sha256", s.ID))
			continue
		}
		if _, err := Read(f.Dir, s); err == nil {
			fmt.Fprintf(log, "%-30s up to date\n", s.ID)
			continue
		}
		body, source, err := f.get(s, download)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if got := Sum(body); got != s.SHA256 {
			errs = append(errs, fmt.Errorf("schema %s: %w: %s has sha256 %s, want %s", s.ID, ErrAltered, source, got, s.SHA256))
			continue
		}
		fmt.Fprintf(log, "%-30s verified from %s\n", s.ID, source)
		todo = append(todo, fetched{s, body})
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, t := range todo {
		if err := writeAtomic(filepath.Join(f.Dir, filepath.FromSlash(t.s.File)), t.body); err != nil {
			return fmt.Errorf("schema %s: %w", t.s.ID, err)
		}
	}
	return nil
}

// get returns s's bytes from the mirror, or else from its URL, and says
// where they came from.
func (f *Fetcher) get(s Schema, download func(string) ([]byte, error)) ([]byte, string, error) {
	if f.Mirror != "" && s.Mirror != "" {
		path := filepath.Join(f.Mirror, filepath.FromSlash(s.Mirror))
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			return b, path, nil
		case !errors.Is(err, os.ErrNotExist):
			return nil, path, fmt.Errorf("schema %s: %w", s.ID, err)
		case f.Offline:
			return nil, path, fmt.Errorf("schema %s: %w: not in mirror at %s (offline, so not downloading %s; want sha256 %s)", s.ID, ErrMissing, path, s.URL(), s.SHA256)
		}
	}
	if f.Offline {
		return nil, "", fmt.Errorf("schema %s: %w: no mirror path in the manifest and offline (want sha256 %s)", s.ID, ErrMissing, s.SHA256)
	}
	url := s.URL()
	b, err := download(url)
	if err != nil {
		return nil, url, fmt.Errorf("schema %s: download %s (want sha256 %s): %w", s.ID, url, s.SHA256, err)
	}
	return b, url, nil
}

var httpClient = &http.Client{Timeout: 60 * time.Second}

// HTTPDownload GETs url and returns its body; any status but 200 is an error.
func HTTPDownload(url string) ([]byte, error) {
	resp, err := httpClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDownload+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxDownload {
		return nil, fmt.Errorf("response larger than %d bytes", maxDownload)
	}
	return b, nil
}

// writeAtomic writes b to path through a temporary file in the same
// directory and a rename, so readers never see a partial file.
func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
