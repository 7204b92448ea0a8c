package edge

import "github.com/mcpx-dev/mcpx/generated/mcp"

// RevisionLabels are the revisions mcpx serves as plain names, for
// labelling what is observed (metrics, traces): naming a revision is not
// branching on it, and outside the edge nothing holds an mcp.Revision.
func RevisionLabels() []string { return versions(mcp.Revisions) }

// RevisionLabel is the negotiated revision as a plain name, for labels.
func (d *Dialect) RevisionLabel() string { return string(d.rev) }
