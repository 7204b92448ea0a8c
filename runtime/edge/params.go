package edge

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/mcpx-dev/mcpx/internal/mcpjson"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// ParamHeader is a tool argument mirrored into an Mcp-Param-{Name} header
// (x-mcp-header in the tool's inputSchema, SEP-2243).
type ParamHeader struct {
	Name string   // the {Name} part
	Path []string // property keys from the schema root to the argument
}

// ParamHeaders returns the Mcp-Param headers of tool: none for a tool
// without x-mcp-header annotations, an unknown tool, or a tool list that
// cannot be read (the call then reports what is wrong). A namespace that
// reports its version has its tool list read once per version.
func (e *Edge) ParamHeaders(ctx context.Context, tool string) []ParamHeader {
	v, versioned := e.Server.NS.(server.Versioned)
	var version uint64
	if versioned {
		// Read before listing: a list that changes meanwhile is read
		// again on the next call, never kept under a newer version.
		version = v.Version()
		if byTool, ok := e.params.get(version); ok {
			return byTool[tool]
		}
	}
	tools, err := e.Server.NS.ListTools(ctx)
	if err != nil {
		return nil
	}
	byTool := map[string][]ParamHeader{}
	for _, t := range tools {
		if !versioned && t.Name != tool {
			continue
		}
		if bytes.Contains(t.InputSchema, []byte("x-mcp-header")) {
			byTool[t.Name] = paramHeaders(t.InputSchema)
		} else {
			delete(byTool, t.Name) // a later tool of the same name has none
		}
	}
	if versioned {
		e.params.put(version, byTool)
		e.noteTaskSupport(version, tools) // tasks.go: one listing serves both
	}
	return byTool[tool]
}

// paramHeaders reads the x-mcp-header annotations of an inputSchema: only
// properties reachable through a chain of "properties" keys count, as the
// specification requires.
func paramHeaders(schema json.RawMessage) []ParamHeader {
	var out []ParamHeader
	var walk func(raw json.RawMessage, path []string, depth int)
	walk = func(raw json.RawMessage, path []string, depth int) {
		var node struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Header     string                     `json:"x-mcp-header"`
		}
		if depth > 32 || mcpjson.Unmarshal(raw, &node) != nil {
			return
		}
		if node.Header != "" && len(path) > 0 {
			out = append(out, ParamHeader{Name: node.Header, Path: path})
		}
		for k, sub := range node.Properties {
			walk(sub, append(append([]string(nil), path...), k), depth+1)
		}
	}
	walk(schema, nil, 0)
	return out
}
