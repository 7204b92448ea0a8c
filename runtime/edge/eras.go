package edge

import (
	"slices"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
)

// The revisions by era, as the manifest lists them (revision.Tables,
// newest first). Every rule that depends on the era asks IsModern (or the
// tables); a rule never takes "modern" to mean one revision: a client or
// upstream of any modern revision mcpx has is served in that revision.
var (
	// ModernRevisions are served per request (_meta), newest first.
	ModernRevisions = ofEra("modern")
	// LegacyRevisions are negotiated by initialize, newest first.
	LegacyRevisions = ofEra("legacy")
)

// The revisions by role, from the lists above; Headerless (edge.go) is the
// transport pages' rule.
var (
	// NewestModern is what mcpx offers first where it must name a modern
	// revision before the peer has said which it speaks (the upstream
	// probe), and the revision a modern request is refused in when the one
	// it names is not served.
	NewestModern = ModernRevisions[0]
	// Modern is NewestModern under its older name.
	//
	// Deprecated: use NewestModern for the revision, IsModern for the era.
	Modern = NewestModern
	// LatestLegacy answers an initialize that names a revision mcpx does
	// not serve that way: every legacy lifecycle page says the server MUST
	// then respond with another version it supports.
	LatestLegacy = LegacyRevisions[0]
	// Oldest spells results for a stdio client that declared nothing:
	// guessing downward is the safe direction.
	Oldest = LegacyRevisions[len(LegacyRevisions)-1]
)

// ofEra lists the revisions of an era, newest first.
func ofEra(era string) []mcp.Revision {
	var out []mcp.Revision
	for _, t := range revision.Tables { // newest first
		if t.Era == era {
			out = append(out, t.Revision)
		}
	}
	if len(out) == 0 {
		panic("edge: the revision tables have no " + era + " revision")
	}
	return out
}

// Pick is the negotiation rule, on both sides: the first revision of ours
// (newest first, as the manifest orders them) that theirs names too. Names
// in theirs that are no revision of ours are skipped, and their order does
// not matter: the newest revision both sides speak wins. ok is false when
// they share none.
func Pick(ours []mcp.Revision, theirs []string) (mcp.Revision, bool) {
	for _, r := range ours {
		if slices.Contains(theirs, string(r)) {
			return r, true
		}
	}
	return "", false
}

// legacyFor is the revision an initialize naming requested gets: that
// revision when it is a legacy one mcpx serves, else the newest legacy.
func legacyFor(requested string) mcp.Revision {
	if rev, ok := Pick(LegacyRevisions, []string{requested}); ok {
		return rev
	}
	return LatestLegacy
}

// modernOr is rev when it is a modern revision mcpx serves, else
// NewestModern: the revision to answer a modern request in.
func modernOr(rev mcp.Revision) mcp.Revision {
	if IsModern(rev) {
		return rev
	}
	return NewestModern
}

// versions spells revisions as the wire lists them.
func versions(revs []mcp.Revision) []string {
	out := make([]string, len(revs))
	for i, r := range revs {
		out[i] = string(r)
	}
	return out
}
