package gateway

import (
	"strings"

	"github.com/mcpx-dev/mcpx/generated/mcp"
)

// Scheme begins every URI the gateway exposes for a non-root upstream:
// mcpx://<namespace>/<the upstream's URI>.
const Scheme = "mcpx://"

// ExposedURI is the URI (or URI template) uri of upstream namespace ns is
// exposed as.
func ExposedURI(ns, uri string) string { return Scheme + ns + "/" + uri }

// SplitURI takes an exposed URI apart. isMCPX reports whether it begins
// with mcpx:// (the scheme compared without regard to case, as RFC 3986
// has it); ns is then the namespace ("" when there is none: mcpx://,
// mcpx:///x, mcpx://ns without a "/") and rest the upstream's URI.
func SplitURI(uri string) (ns, rest string, isMCPX bool) {
	if len(uri) < len(Scheme) || !strings.EqualFold(uri[:len(Scheme)], Scheme) {
		return "", "", false
	}
	tail := uri[len(Scheme):]
	i := strings.IndexByte(tail, '/')
	if i <= 0 {
		return "", "", true
	}
	return tail[:i], tail[i+1:], true
}

// outURI is the URI the client sees for uri of m.
func (m *member) outURI(uri string) string {
	if m.root {
		return uri
	}
	return ExposedURI(m.name, uri)
}

// mapBlocks returns blocks with the URI of every resource link and
// embedded resource exposed; the upstream's values are not modified.
// Blocks with no URI to expose (text, say) are returned as they are, not
// copied.
func (m *member) mapBlocks(blocks []mcp.ContentBlock) []mcp.ContentBlock {
	if !m.mapsAny(blocks) {
		return blocks
	}
	out := make([]mcp.ContentBlock, len(blocks))
	for i, b := range blocks {
		out[i] = mcp.ContentBlock{Value: m.mapBlock(b.Value)}
	}
	return out
}

// mapsAny reports whether mapBlocks changes any of blocks: a URI to
// expose, outside the root namespace.
func (m *member) mapsAny(blocks []mcp.ContentBlock) bool {
	return !m.root && blocks != nil && hasURIs(blocks)
}

// hasURIs reports whether a block is one mapBlock changes.
func hasURIs(blocks []mcp.ContentBlock) bool {
	for _, b := range blocks {
		switch c := b.Value.(type) {
		case *mcp.ResourceLink:
			if c != nil {
				return true
			}
		case *mcp.EmbeddedResource:
			if c != nil {
				return true
			}
		}
	}
	return false
}

func (m *member) mapBlock(v mcp.ContentBlockValue) mcp.ContentBlockValue {
	switch c := v.(type) {
	case *mcp.ResourceLink:
		if c == nil {
			return v
		}
		cp := *c
		cp.URI = m.outURI(c.URI)
		return &cp
	case *mcp.EmbeddedResource:
		if c == nil {
			return v
		}
		cp := *c
		cp.Resource = mcp.EmbeddedResourceResource{Value: m.mapResourceContents(c.Resource.Value)}
		return &cp
	}
	return v
}

// mapResourceContents exposes the URI of text or blob contents; both
// embedded resources and resources/read results hold them.
func (m *member) mapResourceContents(v any) mcpResourceContents {
	switch c := v.(type) {
	case *mcp.TextResourceContents:
		if c == nil {
			return c
		}
		cp := *c
		cp.URI = m.outURI(c.URI)
		return &cp
	case *mcp.BlobResourceContents:
		if c == nil {
			return c
		}
		cp := *c
		cp.URI = m.outURI(c.URI)
		return &cp
	}
	if c, ok := v.(mcpResourceContents); ok {
		return c
	}
	return nil
}

// mcpResourceContents is what both unions of resource contents hold.
type mcpResourceContents interface {
	mcp.EmbeddedResourceResourceValue
	mcp.ReadResourceResultContentsItemValue
}

func (m *member) mapContents(items []mcp.ReadResourceResultContentsItem) []mcp.ReadResourceResultContentsItem {
	if m.root || items == nil {
		return items
	}
	out := make([]mcp.ReadResourceResultContentsItem, len(items))
	for i, it := range items {
		out[i] = mcp.ReadResourceResultContentsItem{Value: m.mapResourceContents(it.Value)}
	}
	return out
}

func (m *member) mapMessages(msgs []mcp.PromptMessage) []mcp.PromptMessage {
	if m.root || msgs == nil {
		return msgs
	}
	out := make([]mcp.PromptMessage, len(msgs))
	for i, msg := range msgs {
		out[i] = msg
		out[i].Content = mcp.ContentBlock{Value: m.mapBlock(msg.Content.Value)}
	}
	return out
}
