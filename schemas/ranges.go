package schemas

import (
	"fmt"
	"regexp"
	"strings"
)

// revisionID is how a revision is named: its date.
var revisionID = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// ParseRange checks a revision range as the overlay and the manifest write
// it: an id "X", a closed range "A..B", or an open one "..B" / "A..". ""
// is every revision. It returns the bounds ("" for an open end).
func ParseRange(r string) (lo, hi string, err error) {
	if r == "" {
		return "", "", nil
	}
	lo, hi, isRange := strings.Cut(r, "..")
	if !isRange {
		lo, hi = r, r
	}
	for _, b := range []string{lo, hi} {
		if b != "" && !revisionID.MatchString(b) {
			return "", "", fmt.Errorf("revision range %q: %q is not a revision id (YYYY-MM-DD)", r, b)
		}
	}
	if isRange && lo == "" && hi == "" {
		return "", "", fmt.Errorf("revision range %q: name at least one end (A.., ..B or A..B)", r)
	}
	if lo != "" && hi != "" && lo > hi {
		return "", "", fmt.Errorf("revision range %q: %s is newer than %s", r, lo, hi)
	}
	return lo, hi, nil
}

// InRange reports whether the revision range r (see [ParseRange]) includes
// rev. Revision ids are dates, so they compare as strings. A malformed
// range includes nothing.
func InRange(r, rev string) bool {
	lo, hi, err := ParseRange(r)
	if err != nil {
		return false
	}
	return (lo == "" || rev >= lo) && (hi == "" || rev <= hi)
}

// ExtendsRevision reports whether the extension s extends revision rev: its
// "extends" is a range ("2026-07-28.." extends every revision from
// 2026-07-28 on, so a newer revision inherits it).
func (s Schema) ExtendsRevision(rev string) bool {
	return s.Extends != "" && InRange(s.Extends, rev)
}

// ExtensionsOf returns the extensions that extend rev, in manifest order.
func (m *Manifest) ExtensionsOf(rev string) []Schema {
	var out []Schema
	for _, e := range m.Extensions {
		if e.ExtendsRevision(rev) {
			out = append(out, e)
		}
	}
	return out
}

// checkExtensions: every extension names a well-formed range that covers
// at least one listed revision.
func (m *Manifest) checkExtensions() error {
	for _, e := range m.Extensions {
		if e.Extends == "" {
			return fmt.Errorf("schemas/manifest.json: extension %s: no \"extends\" (a revision id or range such as \"2026-07-28..\")", e.ID)
		}
		if _, _, err := ParseRange(e.Extends); err != nil {
			return fmt.Errorf("schemas/manifest.json: extension %s: extends: %w", e.ID, err)
		}
		covered := false
		for _, s := range m.Schemas {
			covered = covered || e.ExtendsRevision(s.ID)
		}
		if !covered {
			return fmt.Errorf("schemas/manifest.json: extension %s: extends %q, which covers no listed revision", e.ID, e.Extends)
		}
	}
	return nil
}
