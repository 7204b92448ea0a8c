package model

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Overlay holds the facts the schemas cannot state, one entry per fact, as
// read from schemas/overlay.json. Every entry must be used: [Overlay.Unused]
// lists the ones that matched nothing, and the generator fails on them.
type Overlay struct {
	Entries []*Entry `json:"entries"`
}

// Entry is one overlay fact. See gen/README.md for each kind.
type Entry struct {
	Kind      string `json:"kind"`      // open, meta-key, rename, nest, fallback, keep-if, add-meta
	At        string `json:"at"`        // a hub type, or "Type.field"
	Key       string `json:"key"`       // meta-key: the _meta key
	Revisions string `json:"revisions"` // "X", "A..B", "..B", "A.."
	Wire      string `json:"wire"`      // rename: the member's name in those revisions
	Field     string `json:"field"`     // nest: the member the hub type is nested under
	Variant   string `json:"variant"`   // fallback: the union variant's tag
	As        string `json:"as"`        // fallback: the tag of the variant Func turns it into
	Func      string `json:"func"`      // fallback, keep-if: the function in package override
	Why       string `json:"why"`

	used bool
}

var overlayKinds = map[string]bool{"open": true, "meta-key": true, "rename": true, "nest": true, "fallback": true, "keep-if": true, "add-meta": true}

// ParseOverlay reads and checks an overlay document.
func ParseOverlay(b []byte) (*Overlay, error) {
	var o Overlay
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("mcpx-gen: schemas/overlay.json: %w", err)
	}
	for i, e := range o.Entries {
		if !overlayKinds[e.Kind] {
			return nil, fmt.Errorf("mcpx-gen: schemas/overlay.json entry %d: unknown kind %q (want one of open, meta-key, rename, nest, fallback, keep-if, add-meta)", i, e.Kind)
		}
		if strings.TrimSpace(e.Why) == "" {
			return nil, fmt.Errorf("mcpx-gen: schemas/overlay.json entry %d (%s %s): every entry needs a one-line \"why\"", i, e.Kind, e.At+e.Key)
		}
	}
	return &o, nil
}

// Covers reports whether the entry's revisions include rev.
func (e *Entry) Covers(rev string) bool {
	r := e.Revisions
	if r == "" {
		return true
	}
	lo, hi, isRange := strings.Cut(r, "..")
	if !isRange {
		return rev == r
	}
	return (lo == "" || rev >= lo) && (hi == "" || rev <= hi)
}

// Find returns the entries of kind at `at` covering rev, marking them used.
func (o *Overlay) Find(kind, at, rev string) []*Entry {
	var out []*Entry
	for _, e := range o.Entries {
		if e.Kind == kind && e.At == at && (rev == "" || e.Covers(rev)) {
			e.used = true
			out = append(out, e)
		}
	}
	return out
}

// Lookup is [Overlay.Find] for a single entry.
func (o *Overlay) Lookup(kind, at, rev string) *Entry {
	if es := o.Find(kind, at, rev); len(es) > 0 {
		return es[0]
	}
	return nil
}

// Unused lists the entries that matched nothing, as errors a person can act on.
func (o *Overlay) Unused() []string {
	var out []string
	for _, e := range o.Entries {
		if !e.used {
			out = append(out, fmt.Sprintf("mcpx-gen: schemas/overlay.json: %s entry at %q (revisions %q) matched nothing; fix or remove it", e.Kind, e.At+e.Key, e.Revisions))
		}
	}
	sort.Strings(out)
	return out
}
