package gatewaytest

// A 2026-07-28 upstream's tool task support (issue 13): the tasker sends
// execution.taskSupport on its 2026-07-28 tools/list although no
// 2026-07-28 schema defines it (edge/uptoolexec.go reads it). mcpx lists
// it to a 2025-11-25 client as that revision's execution, never to a
// 2026-07-28 client (no schema of that revision or of the extension has
// it: the closed-world check of every message would fail), and honours
// "required": a 2026-07-28 client without the extension is refused -32021
// by mcpx, before the upstream is called.

import (
	"encoding/json"
	"strings"
	"testing"
)

// listedSupport is each listed tool's execution.taskSupport ("" none) in
// a tools/list result, and whether any tool carried an execution member.
func listedSupport(t *testing.T, result json.RawMessage) (map[string]string, bool) {
	t.Helper()
	var r struct {
		Tools []struct {
			Name      string          `json:"name"`
			Execution json.RawMessage `json:"execution"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		t.Fatalf("tools/list: %v in %s", err, result)
	}
	out, any := map[string]string{}, false
	for _, tool := range r.Tools {
		var x struct {
			TaskSupport string `json:"taskSupport"`
		}
		if tool.Execution != nil {
			any = true
			json.Unmarshal(tool.Execution, &x)
		}
		out[tool.Name] = x.TaskSupport
	}
	return out, any
}

func TestUpstreamTaskSupportListed(t *testing.T) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run("2026-07-28 upstream over "+tr, func(t *testing.T) {
			gw, u := taskerGateway(t, tr, "2026-07-28")
			legacy := b3Client(t, gw, tr, "2025-11-25", `{}`)
			got, _ := listedSupport(t, b3Request(legacy, "tools/list", `{}`).final.Result)
			for tool, want := range map[string]string{"up__slow": "required", "up__opt": "optional", "up__plain": ""} {
				if got[tool] != want {
					t.Errorf("2025-11-25 client: %s listed taskSupport %q, want %q", tool, got[tool], want)
				}
			}

			c := newModernClient(t, gw, tr)
			c.id++
			raw := c.send(c.id, "tools/list", "", `{`+extClientMeta+`}`)
			var f struct{ Result json.RawMessage }
			json.Unmarshal(raw, &f)
			if _, any := listedSupport(t, f.Result); any || f.Result == nil {
				t.Errorf("a 2026-07-28 client was listed an execution member (or no tools): %s", raw)
			}

			a := c.call("up__slow", "", "") // modernMeta: no extension
			if a.Error == nil || a.Error.Code != -32021 || !strings.Contains(a.raw, "io.modelcontextprotocol/tasks") {
				t.Errorf("up__slow without the extension answered %s, want -32021 naming the extension", a.raw)
			}
			for _, l := range u.seen(t) {
				if strings.HasPrefix(l, "call slow") {
					t.Errorf("the upstream was called for a required tool the client could not take as a task: %s", l)
				}
			}
		})
	}
}
