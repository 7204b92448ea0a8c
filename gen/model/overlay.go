package model

import (
	"fmt"
	"sort"

	"github.com/mcpx-dev/mcpx/schemas"
)

// Overlay is schemas/overlay.json as the generator uses it: entries found by
// kind, place and revision, and every use recorded, so that
// [Overlay.Unused] can report an entry that matched nothing.
type Overlay struct {
	Entries []*Entry
	Sum     string // sha256 of the document, for the generated files' headers
	used    map[*Entry]bool
}

// Entry is one overlay fact; see [schemas.Entry].
type Entry = schemas.Entry

// ParseOverlay reads and checks an overlay document.
func ParseOverlay(b []byte) (*Overlay, error) {
	o, err := schemas.ParseOverlay(b)
	if err != nil {
		return nil, fmt.Errorf("mcpx-gen: %w", err)
	}
	return &Overlay{Entries: o.Entries, Sum: schemas.Sum(b), used: map[*Entry]bool{}}, nil
}

func (o *Overlay) use(e *Entry) { o.used[e] = true }

// Find returns the entries of kind at `at` covering rev ("" for any),
// marking them used.
func (o *Overlay) Find(kind, at, rev string) []*Entry {
	var out []*Entry
	for _, e := range o.Entries {
		if e.Kind == kind && e.At == at && (rev == "" || e.Covers(rev)) {
			o.use(e)
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
		if !o.used[e] {
			out = append(out, fmt.Sprintf("mcpx-gen: schemas/overlay.json: %s entry at %q (revisions %q) matched nothing; fix or remove it", e.Kind, e.At+e.Key, e.Revisions))
		}
	}
	sort.Strings(out)
	return out
}
