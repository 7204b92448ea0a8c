// Package schemas describes the JSON Schemas mcpx is generated from: the
// revision manifest, the overlay of facts the schemas cannot state, and the
// fetched schema files themselves, each checked against its pinned sha256.
//
// The schema files are not committed. `make schemas` fetches them into this
// directory (see [Fetch]); everything that reads them goes through [Read], so
// a missing or altered file is always the same clear error.
package schemas

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

//go:embed manifest.json
var manifestJSON []byte

//go:embed overlay.json
var overlayJSON []byte

// Era says how a revision is negotiated: "legacy" through initialize,
// "modern" through per-request _meta.
type Era string

const (
	Legacy Era = "legacy"
	Modern Era = "modern"
)

// Schema is one pinned schema file: a protocol revision or an extension.
type Schema struct {
	ID         string `json:"id"`                // revision date or extension identifier
	Era        Era    `json:"era,omitempty"`     // revisions only
	Extends    string `json:"extends,omitempty"` // extensions only: the revisions they extend, "A..", "A..B" or "X"
	Repository string `json:"repository"`        // owner/name on GitHub
	Commit     string `json:"commit"`
	Path       string `json:"path"`   // path inside Repository
	Mirror     string `json:"mirror"` // path inside a local mirror such as ../shared/spec
	File       string `json:"file"`   // path inside this directory
	SHA256     string `json:"sha256"`
}

// URL is where the pinned file can be downloaded.
func (s Schema) URL() string {
	return "https://raw.githubusercontent.com/" + s.Repository + "/" + s.Commit + "/" + s.Path
}

// Manifest lists every schema mcpx is built from. Schemas are newest first.
type Manifest struct {
	Schemas    []Schema `json:"schemas"`
	Extensions []Schema `json:"extensions"`
}

// All returns the revisions followed by the extensions.
func (m *Manifest) All() []Schema {
	return append(append([]Schema(nil), m.Schemas...), m.Extensions...)
}

// Lookup finds a revision or extension by id.
func (m *Manifest) Lookup(id string) (Schema, bool) {
	for _, s := range m.All() {
		if s.ID == id {
			return s, true
		}
	}
	return Schema{}, false
}

// Load returns the embedded manifest.
func Load() (*Manifest, error) { return ParseManifest(manifestJSON) }

// ParseManifest reads and checks a manifest document.
func ParseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("schemas/manifest.json: %w", err)
	}
	if len(m.Schemas) == 0 {
		return nil, errors.New("schemas/manifest.json: no schemas listed")
	}
	if err := m.checkExtensions(); err != nil {
		return nil, err
	}
	return &m, nil
}

// OverlayJSON returns the embedded overlay's bytes.
func OverlayJSON() []byte { return overlayJSON }

// SourceDir is the absolute path of this directory in the source tree, where
// `make schemas` puts the fetched files. It is only meaningful when running
// from a checkout (go generate, go test), which is the only time the schema
// files are needed.
func SourceDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// ErrMissing and ErrAltered classify a [Read] failure.
var (
	ErrMissing = errors.New("schema file missing")
	ErrAltered = errors.New("schema file does not match its pinned sha256")
)

// Read returns the schema file for s from dir, checked against its pinned
// sha256. Errors name the schema and say how to fix it.
func Read(dir string, s Schema) ([]byte, error) {
	path := filepath.Join(dir, filepath.FromSlash(s.File))
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("schema %s: %w: %s (run `make schemas`)", s.ID, ErrMissing, path)
	}
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", s.ID, err)
	}
	if got := Sum(b); got != s.SHA256 {
		return nil, fmt.Errorf("schema %s: %w: %s has sha256 %s, want %s (run `make schemas` to fetch it again)", s.ID, ErrAltered, path, got, s.SHA256)
	}
	return b, nil
}

// Sum is the hex sha256 of b.
func Sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
