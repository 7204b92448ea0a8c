package schemas

import (
	"encoding/json"
	"fmt"
	"go/token"
	"strings"
)

// Overlay holds the facts about the wire that the schemas cannot state, one
// entry per fact, as written in overlay.json. gen/README.md explains each
// kind; the generator fails on an entry that matches nothing.
type Overlay struct {
	Entries []*Entry `json:"entries"`
}

// Entry is one overlay fact.
type Entry struct {
	Kind      string `json:"kind"`      // one of OverlayKinds
	At        string `json:"at"`        // a hub type, or "Type.member"
	Key       string `json:"key"`       // meta-key, or rename/removed of a _meta key: the key (its newest spelling)
	Type      string `json:"type"`      // meta-key: the value's type, a definition of the revision's schema or a JSON type ("string")
	Revisions string `json:"revisions"` // "X", "A..B", "..B" or "A.."; "" is every revision
	Wire      string `json:"wire"`      // rename: the member's name in those revisions
	GoName    string `json:"goName"`    // rename: the hub's Go field name, kept when the newest revision respells the member
	Field     string `json:"field"`     // nest: the member the type's members sit under
	Variant   string `json:"variant"`   // fallback: the union variant's tag, or "*" for any object variant the revisions lack that no other entry covers
	As        string `json:"as"`        // fallback: the tag of the variant Func turns it into
	Func      string `json:"func"`      // fallback, keep-if: the function in package override
	By        string `json:"by"`        // route: how the gateway finds the upstream (name, uri, ref, task, merge, local)
	Space     string `json:"space"`     // route by name or ref: whose names (tool, prompt)
	Fallback  string `json:"fallback"`  // route: what an upstream whose revision lacks the method gets (refuse, empty)
	Why       string `json:"why"`       // one line
}

// OverlayKinds lists the kinds of entry overlay.json may hold.
var OverlayKinds = []string{"open", "meta-key", "rename", "removed", "nest", "fallback", "keep-if", "add-meta", "add-result-type", "route"}

// ParseOverlay reads and checks an overlay document: every entry has a
// known kind and a reason.
func ParseOverlay(b []byte) (*Overlay, error) {
	var o Overlay
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("schemas/overlay.json: %w", err)
	}
	for i, e := range o.Entries {
		known := false
		for _, k := range OverlayKinds {
			known = known || e.Kind == k
		}
		if !known {
			return nil, fmt.Errorf("schemas/overlay.json entry %d: unknown kind %q (want one of %s)", i, e.Kind, strings.Join(OverlayKinds, ", "))
		}
		if strings.TrimSpace(e.Why) == "" {
			return nil, fmt.Errorf("schemas/overlay.json entry %d (%s %s): every entry needs a one-line \"why\"", i, e.Kind, e.At+e.Key)
		}
		if _, _, err := ParseRange(e.Revisions); err != nil {
			return nil, fmt.Errorf("schemas/overlay.json entry %d (%s %s): revisions: %w", i, e.Kind, e.At+e.Key, err)
		}
		if e.GoName != "" && (e.Kind != "rename" || !token.IsIdentifier(e.GoName) || !token.IsExported(e.GoName)) {
			return nil, fmt.Errorf("schemas/overlay.json entry %d (%s %s): goName %q: only a rename takes one, and it must be an exported Go identifier", i, e.Kind, e.At, e.GoName)
		}
		if e.Kind == "fallback" && (e.At == "" || e.Variant == "" || e.As == "" || e.Func == "" || e.Variant == e.As) {
			return nil, fmt.Errorf("schemas/overlay.json entry %d (fallback %s): name the union (\"at\"), the variant (\"variant\", or \"*\" for any the revisions lack), the variant it becomes (\"as\", another) and the function in package override (\"func\")", i, e.At)
		}
		if e.Kind == "removed" && (e.Revisions == "" || !strings.Contains(e.At, ".") && e.Key == "") {
			return nil, fmt.Errorf("schemas/overlay.json entry %d (removed %s): name the member (\"Type.member\") or _meta key (\"key\") and the revisions that lack it (\"A..\")", i, e.At+e.Key)
		}
	}
	return &o, nil
}

// LoadOverlay parses the embedded overlay.json.
func LoadOverlay() (*Overlay, error) { return ParseOverlay(overlayJSON) }

// Covers reports whether the entry's revisions include rev.
func (e *Entry) Covers(rev string) bool { return InRange(e.Revisions, rev) }
