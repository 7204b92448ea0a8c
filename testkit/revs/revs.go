// Package revs gives tests the protocol revisions by role, read from the
// generated tables (mcp.Revisions, package revision), so that a test that
// means "every revision", "every legacy revision", "the newest" or "the
// revisions that have method X" picks up a new revision without being
// edited. A test about one revision's own behaviour (a 2024-11-05 quirk,
// the 2025-03-26 batch) names that revision instead.
//
// Lists are newest first, as the tables are; OldestFirst reverses one.
package revs

import (
	"slices"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
)

// Era values of revision.Table.
const (
	eraLegacy = "legacy" // negotiated through initialize
	eraModern = "modern" // per request, through _meta
)

// tables are the tables every function reads: revision.Tables, which
// holds the same revisions as mcp.Revisions in the same order (see
// TestTablesMatchRevisions); a test of this package swaps in others.
var tables = revision.Tables

// All is every revision mcpx is generated from, newest first.
func All() []mcp.Revision { return where(tables, func(*revision.Table) bool { return true }) }

// Legacy is every legacy revision (negotiated through initialize), newest first.
func Legacy() []mcp.Revision { return where(tables, isLegacy) }

// Modern is every modern revision (negotiated per request through _meta), newest first.
func Modern() []mcp.Revision { return where(tables, isModern) }

// IsModern reports whether rev is a modern revision; false for a revision
// the tables do not have.
func IsModern[R ~string](rev R) bool {
	t := lookup(mcp.Revision(rev))
	return t != nil && isModern(t)
}

// IsLegacy reports whether rev is a legacy revision; false for a revision
// the tables do not have.
func IsLegacy[R ~string](rev R) bool {
	t := lookup(mcp.Revision(rev))
	return t != nil && isLegacy(t)
}

// Known reports whether the tables have rev.
func Known[R ~string](rev R) bool { return lookup(mcp.Revision(rev)) != nil }

// Newest is the newest revision.
func Newest() mcp.Revision { return first(All()) }

// Oldest is the oldest revision.
func Oldest() mcp.Revision { return first(OldestFirst(All())) }

// NewestLegacy is the newest legacy revision: what a legacy client that
// asks for an unknown version is offered.
func NewestLegacy() mcp.Revision { return first(Legacy()) }

// NewestModern is the newest modern revision.
func NewestModern() mcp.Revision { return first(Modern()) }

// PreviousModern is the modern revision before the newest one; ok is false
// while there is only one.
func PreviousModern() (rev mcp.Revision, ok bool) {
	if m := Modern(); len(m) > 1 {
		return m[1], true
	}
	return "", false
}

// HasMethod reports whether rev has the method (request or notification).
func HasMethod[R ~string](rev R, method string) bool {
	t := lookup(mcp.Revision(rev))
	if t == nil {
		return false
	}
	_, ok := t.Method(method)
	return ok
}

// HasType reports whether rev has the hub type.
func HasType[R ~string](rev R, typ string) bool {
	t := lookup(mcp.Revision(rev))
	if t == nil {
		return false
	}
	_, ok := t.Type(typ)
	return ok
}

// HasMember reports whether rev's hub type typ has the member (as rev
// spells it).
func HasMember[R ~string](rev R, typ, member string) bool {
	t := lookup(mcp.Revision(rev))
	return t != nil && hasMember(t, typ, member)
}

// HasServerCapability reports whether rev defines the server capability
// (a dotted member path, as in revision.Table.ServerCapabilities).
func HasServerCapability[R ~string](rev R, path string) bool {
	t := lookup(mcp.Revision(rev))
	return t != nil && slices.Contains(t.ServerCapabilities, path)
}

// HasMetaKey reports whether rev defines the reserved _meta key.
func HasMetaKey[R ~string](rev R, key string) bool {
	t := lookup(mcp.Revision(rev))
	return t != nil && slices.Contains(t.MetaKeys, key)
}

// WithMethod is every revision that has the method, newest first.
func WithMethod(method string) []mcp.Revision {
	return Where(func(t *revision.Table) bool { _, ok := t.Method(method); return ok })
}

// WithoutMethod is every revision that lacks the method, newest first.
func WithoutMethod(method string) []mcp.Revision {
	return Where(func(t *revision.Table) bool { _, ok := t.Method(method); return !ok })
}

// WithMember is every revision whose hub type typ has the member, newest first.
func WithMember(typ, member string) []mcp.Revision {
	return Where(func(t *revision.Table) bool { return hasMember(t, typ, member) })
}

// WithoutMember is every revision whose hub type typ lacks the member (or
// that lacks the type), newest first.
func WithoutMember(typ, member string) []mcp.Revision {
	return Where(func(t *revision.Table) bool { return !hasMember(t, typ, member) })
}

// WithMetaKey is every revision that defines the reserved _meta key, newest first.
func WithMetaKey(key string) []mcp.Revision {
	return Where(func(t *revision.Table) bool { return slices.Contains(t.MetaKeys, key) })
}

// WithoutMetaKey is every revision that does not define the reserved _meta key, newest first.
func WithoutMetaKey(key string) []mcp.Revision {
	return Where(func(t *revision.Table) bool { return !slices.Contains(t.MetaKeys, key) })
}

// Where is every revision whose table satisfies keep, newest first.
func Where(keep func(*revision.Table) bool) []mcp.Revision { return where(tables, keep) }

// OldestFirst returns a copy of revs in the opposite order.
func OldestFirst(revs []mcp.Revision) []mcp.Revision {
	out := slices.Clone(revs)
	slices.Reverse(out)
	return out
}

// Strings returns revs as plain strings, in the same order.
func Strings(revs []mcp.Revision) []string {
	out := make([]string, len(revs))
	for i, r := range revs {
		out[i] = string(r)
	}
	return out
}

func lookup(rev mcp.Revision) *revision.Table {
	for _, t := range tables {
		if t.Revision == rev {
			return t
		}
	}
	return nil
}

func isLegacy(t *revision.Table) bool { return t.Era == eraLegacy }
func isModern(t *revision.Table) bool { return t.Era == eraModern }

func hasMember(t *revision.Table, typ, member string) bool {
	ty, ok := t.Type(typ)
	return ok && slices.Contains(ty.Fields, member)
}

func where(tables []*revision.Table, keep func(*revision.Table) bool) []mcp.Revision {
	var out []mcp.Revision
	for _, t := range tables {
		if keep(t) {
			out = append(out, t.Revision)
		}
	}
	return out
}

func first(revs []mcp.Revision) mcp.Revision {
	if len(revs) == 0 {
		return ""
	}
	return revs[0]
}
