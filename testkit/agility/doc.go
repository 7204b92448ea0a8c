// Package agility checks mcpx's promise that a new protocol revision lands
// with data only: an entry in schemas/manifest.json, entries in
// schemas/overlay.json, and `make generate`, with no hand-written Go.
//
// TestNewRevision does on a copy of the repository what a maintainer does
// for a real revision. It derives a synthetic revision from the newest
// schema (an added optional member on Tool, an added method pair
// tools/validate, an added ContentBlock variant, a renamed member of
// Implementation, the tasks extension carried forward), adds it to the
// copy's manifest and overlay, fetches, generates, builds and vets the copy,
// runs the copy's table-driven tests and TestServeNewRevision there, and
// counts the .go files outside generated/ that differ from the original:
// there must be none.
//
// TestServeNewRevision runs only where the environment names a revision the
// tables have (MCPX_AGILITY_REVISION, set by TestNewRevision in the copy):
// it serves that revision and the previous modern one side by side through
// the gateway, with every message closed-world checked.
//
// The package holds only tests; this file exists so that it builds.
package agility
