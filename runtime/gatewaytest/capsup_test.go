package gatewaytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// What the client can do reaches the upstream (issue 12): through config,
// host.Gateway, the upstream client, the gateway and the edge over
// Streamable HTTP, a 2026-07-28 upstream is told on each forwarded request
// the clientCapabilities mcpx can relay to the client behind it, and its
// -32021 reaches only a client that really lacks what it names.

// capsSeen is one request a capsUpstream got: its method, the tool it
// names, and the clientCapabilities in its _meta.
type capsSeen struct {
	Method, Name string
	Caps         json.RawMessage
}

// capsUpstream is a hand-written 2026-07-28 Streamable HTTP upstream that
// records the clientCapabilities of every request and behaves as a
// conforming server would: its tool plain answers "plain"; elicit answers
// "asked" when told the client has elicitation (form), else -32021 naming
// it; sample_tools the same for sampling.tools; stubborn always answers
// -32021 naming elicitation (form), as an upstream would that mcpx failed
// to tell. Every message mcpx sends it is checked closed-world.
type capsUpstream struct {
	url  string
	mu   sync.Mutex
	seen []capsSeen
}

func (u *capsUpstream) saw() []capsSeen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]capsSeen(nil), u.seen...)
}

func newCapsUpstream(t *testing.T) *capsUpstream {
	t.Helper()
	u := &capsUpstream{}
	u.url = rawModernUpstream(t, func(_ *http.Request, m *rawCall, reply rawReply) {
		u.mu.Lock()
		u.seen = append(u.seen, capsSeen{m.Method, m.Params.Name, m.Params.Meta.Caps})
		u.mu.Unlock()
		var caps struct {
			Elicitation *struct {
				Form json.RawMessage `json:"form"`
				URL  json.RawMessage `json:"url"`
			} `json:"elicitation"`
			Sampling *struct {
				Tools json.RawMessage `json:"tools"`
			} `json:"sampling"`
		}
		_ = json.Unmarshal(m.Params.Meta.Caps, &caps)
		answer := reply.result
		text := func(s string) { answer(completeText(s)) }
		missing := func(required string) {
			reply.errorData(-32021, "Missing required client capability", `{"requiredCapabilities":`+required+`}`)
		}
		elicitForm := caps.Elicitation != nil && (caps.Elicitation.Form != nil || caps.Elicitation.URL == nil)
		switch {
		case m.Method == "server/discover":
			answer(discoverResult("raw-caps", `{"tools":{}}`))
		case m.Method == "tools/list":
			answer(toolsResult("plain", "elicit", "sample_tools", "stubborn"))
		case m.Method == "tools/call" && m.Params.Name == "plain":
			text("plain")
		case m.Method == "tools/call" && m.Params.Name == "elicit" && elicitForm:
			text("asked")
		case m.Method == "tools/call" && m.Params.Name == "elicit":
			missing(`{"elicitation":{"form":{}}}`)
		case m.Method == "tools/call" && m.Params.Name == "sample_tools" && caps.Sampling != nil && caps.Sampling.Tools != nil:
			text("sampled")
		case m.Method == "tools/call" && m.Params.Name == "sample_tools":
			missing(`{"sampling":{"tools":{}}}`)
		case m.Method == "tools/call" && m.Params.Name == "stubborn":
			missing(`{"elicitation":{"form":{}}}`)
		default:
			reply.error(-32601, "no "+m.Method+" here")
		}
	})
	return u
}

// capsGateway fronts a fresh capsUpstream as namespace "up"; the log is
// the gateway's.
func capsGateway(t *testing.T) (*gateway.Gateway, *capsUpstream, *wiretest.LockedBuffer) {
	t.Helper()
	u := newCapsUpstream(t)
	gw, logs := readyGateway(t, "caps.json", `{"mcpServers": {"up": {"url": "`+u.url+`"}}}`, "", nil)
	return gw, u, logs
}

// capsAnswer is a response as these tests read it.
type capsAnswer struct {
	Result *struct {
		Content []struct{ Text string } `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Required json.RawMessage `json:"requiredCapabilities"`
		} `json:"data"`
	} `json:"error"`
	raw string
}

// capsClient calls tools on the gateway over Streamable HTTP as a client
// of revision rev that declared caps (a JSON object): per request for
// 2026-07-28, in initialize for a legacy revision.
func capsClient(t *testing.T, gw *gateway.Gateway, rev, caps string) func(tool string) capsAnswer {
	endpoint, hc := serveHTTP(t, gw, rev)
	modern := rev == "2026-07-28"
	hdr := map[string]string{"MCP-Protocol-Version": rev}
	if !modern {
		resp, err := postJSON(t.Context(), hc, endpoint, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+rev+`","capabilities":`+caps+`,"clientInfo":{"name":"caps-test","version":"1"}}}`)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		hdr["Mcp-Session-Id"] = resp.Header.Get("Mcp-Session-Id")
		if hdr["Mcp-Session-Id"] == "" {
			t.Fatalf("initialize: %d, no session id", resp.StatusCode)
		}
		resp, err = postJSON(t.Context(), hc, endpoint, hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	id := 1
	return func(tool string) capsAnswer {
		t.Helper()
		id++
		meta := ""
		h := map[string]string{}
		for k, v := range hdr {
			h[k] = v
		}
		if modern {
			meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"caps-test","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps + `},`
			h["Mcp-Method"], h["Mcp-Name"] = "tools/call", tool
		}
		resp, err := postJSON(t.Context(), hc, endpoint, h, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s"name":%q,"arguments":{}}}`, id, meta, tool))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		a := capsAnswer{raw: string(body)}
		if err := json.Unmarshal(lastData(body), &a); err != nil {
			t.Fatalf("%s: %v in %s", tool, err, body)
		}
		return a
	}
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b string) bool {
	var x, y any
	return json.Unmarshal([]byte(a), &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

// wantText checks a is a result whose one text is want.
func wantText(t *testing.T, a capsAnswer, want string) {
	t.Helper()
	if a.Result == nil || len(a.Result.Content) != 1 || a.Result.Content[0].Text != want {
		t.Errorf("got %s, want the text %q", a.raw, want)
	}
}

// wantMissing checks a is the missing-capability error of the client's
// revision naming required: -32021 with requiredCapabilities for
// 2026-07-28, -32600 saying it for a legacy client.
func wantMissing(t *testing.T, a capsAnswer, rev, required string) {
	t.Helper()
	switch {
	case a.Error == nil:
		t.Errorf("got %s, want the missing capability error", a.raw)
	case rev == "2026-07-28" && (a.Error.Code != -32021 || !sameJSON(string(a.Error.Data.Required), required)):
		t.Errorf("got %s, want -32021 with requiredCapabilities %s", a.raw, required)
	case rev != "2026-07-28" && (a.Error.Code != -32600 || !strings.Contains(a.Error.Message, "capabilit")):
		t.Errorf("got %s, want -32600 saying a capability is missing", a.raw)
	}
}

// wantUnrelayed checks a is -32603 saying mcpx could not relay what the
// client declared, and the gateway logged it.
func wantUnrelayed(t *testing.T, a capsAnswer, logs *wiretest.LockedBuffer) {
	t.Helper()
	const msg = `upstream "up": tools/call: the upstream needs the client capabilities {"elicitation":{"form":{}}}, which the client declared but mcpx could not relay to it`
	if a.Error == nil || a.Error.Code != -32603 || a.Error.Message != msg {
		t.Errorf("got %s\nwant -32603 %q", a.raw, msg)
	}
	if !strings.Contains(logs.String(), "a client capability the client declared but mcpx did not relay") || !strings.Contains(logs.String(), "upstream=up") {
		t.Errorf("the gateway did not log the unrelayed capability:\n%s", logs.String())
	}
}

// lastCaps is the clientCapabilities of the last tools/call of tool the
// upstream got.
func (u *capsUpstream) lastCaps(t *testing.T, tool string) string {
	t.Helper()
	seen := u.saw()
	for i := len(seen) - 1; i >= 0; i-- {
		if seen[i].Method == "tools/call" && seen[i].Name == tool {
			return string(seen[i].Caps)
		}
	}
	t.Fatalf("the upstream got no tools/call of %s: %+v", tool, seen)
	return ""
}

// TestClientCapabilitiesReachUpstream: a 2026-07-28 client that declares
// elicitation (form and url), sampling (context, tools), roots, an
// experimental capability and the tasks extension has the upstream told
// its elicitation, sampling and roots, which bridge 4 relays, and not
// the experimental capability, which mcpx does not relay; the upstream
// then asks. Every tools/call declares the tasks extension, whatever the
// client declared: mcpx follows an upstream's task itself
// (tasks_upstream_test.go). Legacy clients have it told what they declared at
// initialize of the same (bridge 3 asks them; bridge3_test.go); a
// 2026-07-28 client that declares nothing has it told {}. mcpx's own requests (the probe, the shared list loads) declare
// {} too.
func TestClientCapabilitiesReachUpstream(t *testing.T) {
	gw, u, _ := capsGateway(t)
	full := `{"elicitation":{"form":{},"url":{}},"sampling":{"context":{},"tools":{}},"roots":{},"experimental":{"x.y/z":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	for _, tc := range []struct{ name, rev, declared, told string }{
		{"2026-07-28 declaring everything", "2026-07-28", full, `{"elicitation":{"form":{},"url":{}},"sampling":{"context":{},"tools":{}},"roots":{}}`},
		{"2026-07-28 declaring elicitation", "2026-07-28", `{"elicitation":{}}`, `{"elicitation":{}}`},
		{"2026-07-28 declaring nothing", "2026-07-28", `{}`, `{}`},
		{"2025-06-18 declaring elicitation, sampling, roots", "2025-06-18", `{"elicitation":{},"sampling":{},"roots":{"listChanged":true}}`, `{"elicitation":{},"sampling":{},"roots":{}}`},
		{"2025-11-25 declaring everything", "2025-11-25", `{"elicitation":{"form":{},"url":{}},"sampling":{"tools":{}},"roots":{},"tasks":{"list":{}}}`, `{"elicitation":{"form":{},"url":{}},"sampling":{"tools":{}},"roots":{}}`},
		{"2025-11-25 declaring nothing", "2025-11-25", `{}`, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := capsClient(t, gw, tc.rev, tc.declared)
			wantText(t, call("up__plain"), "plain")
			// The tasks extension rides on a tools/call for a legacy client
			// (mcpx holds its task) and for a 2026-07-28 one that declared
			// it; one that did not gets the upstream's own answer.
			want := tc.told
			if tc.rev != "2026-07-28" || strings.Contains(tc.declared, "io.modelcontextprotocol/tasks") {
				want = withTasksDeclared(tc.told)
			}
			if got := u.lastCaps(t, "plain"); !sameJSON(got, want) {
				t.Errorf("the upstream was told clientCapabilities %s, want %s", got, want)
			}
			if tc.told != `{}` && tc.rev == "2026-07-28" {
				// A conforming upstream asks a client it was told can
				// answer (a legacy one is asked on its call's stream,
				// which this client does not answer: bridge3_test.go).
				wantText(t, call("up__elicit"), "asked")
			}
		})
	}
	for _, s := range u.saw() {
		if s.Method != "tools/call" && string(s.Caps) != `{}` {
			t.Errorf("mcpx's own %s declared clientCapabilities %s, want {}", s.Method, s.Caps)
		}
	}
}

// TestMissingCapabilityReachesOnlyALackingClient: an upstream's -32021
// reaches a client that did not declare what it names as the client's
// missing capability error (-32021 with requiredCapabilities for
// 2026-07-28, -32600 for a legacy client); a client that did declare it
// (an upstream that says so anyway) gets
// -32603 saying mcpx could not relay it, and the gateway logs it.
func TestMissingCapabilityReachesOnlyALackingClient(t *testing.T) {
	t.Run("2026-07-28 declaring nothing", func(t *testing.T) {
		gw, _, _ := capsGateway(t)
		call := capsClient(t, gw, "2026-07-28", `{}`)
		wantMissing(t, call("up__elicit"), "2026-07-28", `{"elicitation":{"form":{}}}`)
		wantMissing(t, call("up__stubborn"), "2026-07-28", `{"elicitation":{"form":{}}}`)
	})
	t.Run("2026-07-28 declaring sampling without tools", func(t *testing.T) {
		gw, _, _ := capsGateway(t)
		call := capsClient(t, gw, "2026-07-28", `{"sampling":{},"elicitation":{"url":{}}}`)
		wantMissing(t, call("up__sample_tools"), "2026-07-28", `{"sampling":{"tools":{}}}`)
		// url mode only: form is really missing.
		wantMissing(t, call("up__stubborn"), "2026-07-28", `{"elicitation":{"form":{}}}`)
	})
	t.Run("2026-07-28 declaring elicitation", func(t *testing.T) {
		gw, _, logs := capsGateway(t)
		// {} is form mode: the upstream's claim that form is missing is
		// not the client's doing.
		wantUnrelayed(t, capsClient(t, gw, "2026-07-28", `{"elicitation":{}}`)("up__stubborn"), logs)
	})
	t.Run("2025-06-18 declaring nothing", func(t *testing.T) {
		gw, _, _ := capsGateway(t)
		wantMissing(t, capsClient(t, gw, "2025-06-18", `{}`)("up__elicit"), "2025-06-18", "")
	})
	t.Run("2025-06-18 declaring elicitation", func(t *testing.T) {
		gw, _, logs := capsGateway(t)
		wantUnrelayed(t, capsClient(t, gw, "2025-06-18", `{"elicitation":{}}`)("up__stubborn"), logs)
	})
}

// withTasksDeclared is the clientCapabilities caps (a JSON object) with
// the tasks extension, as every tools/call to a 2026-07-28 upstream
// declares it.
func withTasksDeclared(caps string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(caps), &m) != nil {
		return caps
	}
	m["extensions"] = json.RawMessage(`{"io.modelcontextprotocol/tasks":{}}`)
	b, _ := json.Marshal(m)
	return string(b)
}
