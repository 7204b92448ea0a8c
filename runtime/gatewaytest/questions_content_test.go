package gatewaytest

// Issue 12: content a client's revision cannot carry is refused with a
// clear error, never dropped (tool blocks before 2025-11-25, audio to
// 2024-11-05, tools or toolChoice without sampling.tools), and a question
// that decodes but breaks its own schema is refused -32602 to the
// upstream that asked (bridges 1, 2) or -32603 to the client (bridges 3,
// 4, where the upstream's input_required result is what is wrong), and no
// client is asked it. Over both client transports, from legacy and
// 2026-07-28 upstreams over stdio and HTTP.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/gateway"
)

const (
	toolLoop = `[{"role":"user","content":{"type":"text","text":"Weather?"}},` +
		`{"role":"assistant","content":{"type":"tool_use","id":"t1","name":"get_weather","input":{}}},` +
		`{"role":"user","content":{"type":"tool_result","toolUseId":"t1","content":[{"type":"text","text":"sunny"}]}}]`
	weatherTool = `[{"name":"get_weather","inputSchema":{"type":"object"}}]`
	hiMessages  = `[{"role":"user","content":{"type":"text","text":"Say hi"}}]`
	flatForm    = `{"type":"object","properties":{"name":{"type":"string"}}}`
	nestedForm  = `{"type":"object","properties":{"address":{"type":"object","properties":{"city":{"type":"string"}}}}}`
	untypedForm = `{"properties":{"name":{"type":"string"}}}`
)

// contentQuestions are the extra questions (params as written) the legacy
// asker upstream asks (moreAskerQuestions), and the 2026-07-28 ones too
// (modernContentGateway), by tool.
var contentQuestions = map[string]struct{ method, params string }{
	// Content and capabilities.
	"sample_tool_use": {"sampling/createMessage", `{"maxTokens":10,"messages":` + toolLoop + `}`},
	"sample_tools":    {"sampling/createMessage", `{"maxTokens":10,"messages":` + hiMessages + `,"tools":` + weatherTool + `}`},
	"sample_choice":   {"sampling/createMessage", `{"maxTokens":10,"messages":` + hiMessages + `,"toolChoice":{"mode":"none"}}`},
	// Decodes, but breaks its schema.
	"sample_nomax":      {"sampling/createMessage", `{"messages":` + hiMessages + `}`},
	"sample_nomessages": {"sampling/createMessage", `{"maxTokens":10}`},
	"sample_norole":     {"sampling/createMessage", `{"maxTokens":10,"messages":[{"role":"system","content":{"type":"text","text":"x"}}]}`},
	"elicit_nested":     {"elicitation/create", `{"message":"Where?","requestedSchema":` + nestedForm + `}`},
	"elicit_untyped":    {"elicitation/create", `{"message":"Who?","requestedSchema":` + untypedForm + `}`},
	"elicit_nomessage":  {"elicitation/create", `{"requestedSchema":` + flatForm + `}`},
	"elicit_badurl":     {"elicitation/create", `{"mode":"url","message":"Sign in","url":"not a url"}`},
}

// invalidQuestions are the tools of contentQuestions whose question
// breaks its own schema, and what the refusal says.
var invalidQuestions = map[string]string{
	"sample_nomax":      "params.maxTokens is required",
	"sample_nomessages": "params.messages is required",
	"sample_norole":     `messages[0].role is "system", not user or assistant`,
	"elicit_nested":     `requestedSchema field "address" has type "object"`,
	"elicit_untyped":    `requestedSchema must have "type": "object"`,
	"elicit_nomessage":  "params.message is required",
	"elicit_badurl":     `params.url "not a url" is not an absolute URL`,
}

var moreAskerQuestions = func() map[string]func() (string, any) {
	m := map[string]func() (string, any){}
	for tool, q := range contentQuestions {
		m[tool] = func() (string, any) {
			var p map[string]any
			if err := json.Unmarshal([]byte(q.params), &p); err != nil {
				panic(err)
			}
			return q.method, p
		}
	}
	return m
}()

func moreAskerTools() []string {
	names := make([]string, 0, len(moreAskerQuestions))
	for n := range moreAskerQuestions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// modernContentGateway fronts 2026-07-28 upstreams asking
// contentQuestions: "m" over HTTP, "ms" over stdio (serveModernAsker).
func modernContentGateway(t *testing.T) *gateway.Gateway {
	t.Helper()
	qs := map[string]string{}
	for tool, q := range contentQuestions {
		qs[tool] = `{"method":"` + q.method + `","params":` + q.params + `}`
	}
	rec := filepath.Join(t.TempDir(), "ms.in")
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"m":  map[string]any{"url": modernAsker(t, qs)},
		"ms": map[string]any{"command": os.Args[0], "env": map[string]string{envUpstream: "modernasker", envRecord: rec}},
	}})
	gw, _ := readyGateway(t, "content.json", string(doc), upSecret, func() {
		checkUpstreamWire(t, upstream{ns: "ms", rev: "2026-07-28", record: rec})
	})
	return gw
}

// legacyContentUpstreams are 2025-11-25 askers (the revision that can
// write every one of the questions) over stdio and HTTP.
var legacyContentUpstreams = []askUpstream{{ns: "s", rev: "2025-11-25"}, {ns: "h", rev: "2025-11-25", http: true}}

const samplingTools = `{"sampling":{"tools":{}},"elicitation":{"form":{},"url":{}},"roots":{}}`

// TestQuestionContentRefused: tool_use/tool_result blocks cannot go to a
// 2025-06-18 client (its sampling messages have no such variant): -32602
// naming the content, the client not asked; a 2025-11-25 client that
// declared sampling gets the same question. tools and toolChoice without
// sampling.tools: -32602 to a legacy client, -32021 to a 2026-07-28 one;
// with it, asked. Bridges 1 and 3 (legacy client), 2 and 4 (2026-07-28
// client), over both client transports.
func TestQuestionContentRefused(t *testing.T) {
	legacyGW, _ := askGateway(t, legacyContentUpstreams...)
	modernGW := modernContentGateway(t)
	tools := []string{"s__", "h__", "m__", "ms__"} // bridges 1 and 3 (stdio, HTTP upstreams)
	for _, tr := range []string{"http", "stdio"} {
		t.Run("legacy-client/"+tr, func(t *testing.T) {
			for _, pre := range tools {
				gw := legacyGW
				if strings.HasPrefix(pre, "m") {
					gw = modernGW
				}
				old := b3Client(t, gw, tr, "2025-06-18", `{"sampling":{}}`)
				got := old.call(pre + "sample_tool_use")
				if !strings.Contains(got, "-32602: ") || !strings.Contains(got, "messages[1] holds tool_use content, and ToolUseContent has no 2025-06-18 form") {
					t.Errorf("%ssample_tool_use to a 2025-06-18 client: %q, want -32602 naming the tool_use content", pre, got)
				}
				if q := old.asked(); len(q) != 0 {
					t.Errorf("%ssample_tool_use: the 2025-06-18 client was asked %+v", pre, q)
				}
				cur := b3Client(t, gw, tr, "2025-11-25", `{"sampling":{}}`)
				if got := cur.call(pre + "sample_tool_use"); !strings.Contains(got, "sampled hi") {
					t.Errorf("%ssample_tool_use to a 2025-11-25 client: %q, want it asked and answered", pre, got)
				}
				if q := cur.asked(); len(q) != 1 || !strings.Contains(string(q[0].Params), `"type":"tool_result"`) {
					t.Errorf("%ssample_tool_use: the 2025-11-25 client was asked %+v, want the tool loop as sent", pre, q)
				}
				for _, tool := range []string{"sample_tools", "sample_choice"} {
					if got := cur.call(pre + tool); !strings.Contains(got, "-32602: ") || !strings.Contains(got, "did not declare sampling.tools") {
						t.Errorf("%s%s to a client without sampling.tools: %q, want -32602", pre, tool, got)
					}
				}
				if q := cur.asked(); len(q) != 1 {
					t.Errorf("a client without sampling.tools was asked %d questions, want the one before", len(q))
				}
				withTools := b3Client(t, gw, tr, "2025-11-25", samplingTools)
				for _, tool := range []string{"sample_tools", "sample_choice"} {
					if got := withTools.call(pre + tool); !strings.Contains(got, "sampled hi") {
						t.Errorf("%s%s to a client with sampling.tools: %q, want it answered", pre, tool, got)
					}
				}
			}
		})
		t.Run("modern-client/"+tr, func(t *testing.T) {
			// Bridge 2: the upstream gets the refusal, in its result.
			for _, pre := range []string{"s__", "h__"} {
				for _, tool := range []string{"sample_tools", "sample_choice"} {
					a := newModernClient(t, legacyGW, tr).callWith(`{"sampling":{}}`, pre+tool, "")
					if got := text(a); !strings.HasPrefix(got, "error -32602: ") || !strings.Contains(got, "did not declare sampling.tools") {
						t.Errorf("bridge 2 %s%s without sampling.tools: %s, want the upstream's result carrying -32602", pre, tool, a.raw)
					}
					b, q := modernRound(t, newModernClient(t, legacyGW, tr), samplingTools, pre+tool, "sampling/createMessage")
					if !strings.Contains(text(b), "sampled hi") || !strings.Contains(q, `"tool`) {
						t.Errorf("bridge 2 %s%s with sampling.tools: asked %s, answered %s", pre, tool, q, b.raw)
					}
				}
			}
			// Bridge 4: -32021 naming sampling.tools.
			for _, pre := range []string{"m__", "ms__"} {
				for _, tool := range []string{"sample_tools", "sample_choice"} {
					a := newModernClient(t, modernGW, tr).callWith(`{"sampling":{}}`, pre+tool, "")
					if a.Error == nil || a.Error.Code != -32021 || !strings.Contains(a.raw, `"requiredCapabilities":{"sampling":{"tools":{}}}`) {
						t.Errorf("bridge 4 %s%s without sampling.tools: %s, want -32021 requiring sampling.tools", pre, tool, a.raw)
					}
					b, _ := modernRound(t, newModernClient(t, modernGW, tr), samplingTools, pre+tool, "sampling/createMessage")
					if !strings.Contains(text(b), "sampled hi") {
						t.Errorf("bridge 4 %s%s with sampling.tools: %s", pre, tool, b.raw)
					}
				}
			}
		})
	}
}

// TestQuestionBreakingItsSchemaRefused: a question that decodes but
// breaks its schema (a sampling request without maxTokens or messages, a
// message of role system, a form with a nested object or without "type":
// "object", an elicitation without message, a URL request whose url is no
// URL) is refused -32602 to the legacy upstream that asked, whichever
// client made the call, and to a 2026-07-28 upstream's client it is
// -32603 saying which input request is wrong. No client is asked.
func TestQuestionBreakingItsSchemaRefused(t *testing.T) {
	legacyGW, _ := askGateway(t, legacyContentUpstreams...)
	modernGW := modernContentGateway(t)
	tools := make([]string, 0, len(invalidQuestions))
	for tool := range invalidQuestions {
		tools = append(tools, tool)
	}
	slices.Sort(tools)
	for _, tr := range []string{"http", "stdio"} {
		for _, tool := range tools {
			want := invalidQuestions[tool]
			t.Run(tool+"/"+tr, func(t *testing.T) {
				for _, pre := range []string{"s__", "h__"} {
					c := b3Client(t, legacyGW, tr, "2025-11-25", samplingTools) // bridge 1
					if got := c.call(pre + tool); !strings.HasPrefix(got, "error -32602: ") || !strings.Contains(got, want) {
						t.Errorf("bridge 1 %s%s: the upstream got %q, want -32602 saying %q", pre, tool, got, want)
					}
					if q := c.asked(); len(q) != 0 {
						t.Errorf("bridge 1 %s%s: the client was asked %+v", pre, tool, q)
					}
					m := newModernClient(t, legacyGW, tr) // bridge 2
					a := m.callWith(samplingTools, pre+tool, "")
					if got := text(a); !strings.HasPrefix(got, "error -32602: ") || !strings.Contains(got, want) {
						t.Errorf("bridge 2 %s%s: %s, want the upstream's result carrying -32602 saying %q", pre, tool, a.raw, want)
					}
				}
				for _, pre := range []string{"m__", "ms__"} {
					c := b3Client(t, modernGW, tr, "2025-11-25", samplingTools) // bridge 3
					if got := c.call(pre + tool); !strings.HasPrefix(got, "error -32603: ") || !strings.Contains(got, `inputRequests["q"]`) || !strings.Contains(got, want) {
						t.Errorf("bridge 3 %s%s: %q, want -32603 naming the input request and saying %q", pre, tool, got, want)
					}
					if q := c.asked(); len(q) != 0 {
						t.Errorf("bridge 3 %s%s: the client was asked %+v", pre, tool, q)
					}
					a := newModernClient(t, modernGW, tr).callWith(samplingTools, pre+tool, "") // bridge 4
					if a.Error == nil || a.Error.Code != -32603 || !strings.Contains(a.Error.Message, want) || a.Result != nil {
						t.Errorf("bridge 4 %s%s: %s, want -32603 saying %q, and no question", pre, tool, a.raw, want)
					}
				}
			})
		}
	}
}
