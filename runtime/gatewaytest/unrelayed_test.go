package gatewaytest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// Never corrupt an answer: an upstream result of a kind the hub result type
// does not describe (an input_required result, a task handle) used to be
// decoded as an empty tool result, and the client got an empty success.
// Until the bridges relay them (issue 12), the client gets -32603 saying
// what came back; a 2026-07-28 upstream's input_required reaches a
// 2026-07-28 client (bridge 4, mrtr_test.go) and is asked of a legacy
// client (bridge 3, bridge3_test.go).

// rawUpstream is a Streamable HTTP upstream speaking rev that answers
// tools/call for each tool in calls with that tool's result, as written.
// A legacy one refuses server/discover (-32601, so mcpx initializes); a
// 2026-07-28 one answers it.
func rawUpstream(t *testing.T, rev string, calls map[string]string) string {
	t.Helper()
	modern := rev == "2026-07-28"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &m) != nil || m.ID == nil {
			w.WriteHeader(http.StatusAccepted) // a notification
			return
		}
		complete := ""
		if modern {
			complete = `"resultType":"complete",`
		}
		var result string
		switch {
		case m.Method == "server/discover" && modern:
			result = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"private","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"raw","version":"1"}}}`
		case m.Method == "initialize" && !modern:
			result = `{"protocolVersion":"` + rev + `","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case m.Method == "tools/list":
			var tools []string
			for name := range calls {
				tools = append(tools, `{"name":"`+name+`","inputSchema":{"type":"object"}}`)
			}
			result = `{` + complete + `"tools":[` + strings.Join(tools, ",") + `]}`
			if modern {
				result = `{"resultType":"complete","ttlMs":0,"cacheScope":"private","tools":[` + strings.Join(tools, ",") + `]}`
			}
		case m.Method == "tools/call" && calls[m.Params.Name] != "":
			result = calls[m.Params.Name]
		}
		w.Header().Set("Content-Type", "application/json")
		if result == "" {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s here"}}`, m.ID, m.Method)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

const (
	inputRequired = `{"resultType":"input_required","inputRequests":{"user_name":{"method":"elicitation/create","params":{"mode":"form","message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"upstream-secret"}`
	modernTask    = `{"resultType":"task","taskId":"t-1","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttlMs":60000}`
	legacyTask    = `{"task":{"taskId":"t-2","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000}}`
	oldTask       = `{"task":{"taskId":"t-3","status":"working","createdAt":"2026-01-01T00:00:00Z","lastUpdatedAt":"2026-01-01T00:00:00Z","ttl":60000}}`
	modernDone    = `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`
	legacyDone    = `{"content":[{"type":"text","text":"done"}]}`
)

// unrelayedGateway is a gateway fronting "m", a 2026-07-28 upstream whose
// tools ask (input_required), long (a task handle) and ok (a result)
// answer so, and "l", a 2025-11-25 one whose long answers {task} and ok a
// result.
func unrelayedGateway(t *testing.T) (*gateway.Gateway, *wiretest.LockedBuffer) {
	t.Helper()
	modern := rawUpstream(t, "2026-07-28", map[string]string{"ask": inputRequired, "long": modernTask, "ok": modernDone})
	legacy := rawUpstream(t, "2025-11-25", map[string]string{"long": legacyTask, "ok": legacyDone})
	old := rawUpstream(t, "2025-06-18", map[string]string{"long": oldTask})
	return readyGateway(t, "unrelayed.json", `{"mcpServers": {"m": {"url": "`+modern+`"}, "l": {"url": "`+legacy+`"}, "o": {"url": "`+old+`"}}}`, "upstream-secret", nil)
}

// unrelayedCases are what each tool of unrelayedGateway answers a client:
// an error message (-32603), or "" for the text "done". The task handles
// of m and l are followed (tasks_upstream_test.go), and these upstreams
// have no tasks/get: the call fails saying so. A 2025-06-18 upstream has
// no tasks at all: its {task} is not bridged.
var unrelayedCases = []struct{ tool, want string }{
	{"m__ask", `upstream "m": tools/call: the upstream answered with an input_required result (asking "user_name"), which mcpx cannot relay yet`},
	{"m__long", `upstream "m": task "t-1": tasks/get was refused: no tasks/get here (code -32601)`},
	{"l__long", `upstream "l": task "t-2": tasks/get was refused: no tasks/get here (code -32601); and tasks/result answered: no tasks/result here (code -32601)`},
	{"o__long", `upstream "o": tools/call: the upstream answered with a task handle (task "t-3"), which mcpx cannot relay yet`},
	{"m__ok", ""},
	{"l__ok", ""},
}

// TestUnrelayedResultIsAnError: through config, host.Gateway, the upstream
// client, the gateway and the edge over Streamable HTTP, a 2025-06-18 and
// a 2026-07-28 client calling a tool whose upstream answers input_required
// or a task handle (2026-07-28 resultType "task"; a 2025-11-25 {task} to a
// call sent without a task field) get -32603 naming the upstream and what
// it sent, never a success; a complete result still passes.
func TestUnrelayedResultIsAnError(t *testing.T) {
	gw, _ := unrelayedGateway(t)
	ctx := t.Context()
	cases := unrelayedCases
	for _, rev := range []string{"2025-06-18", "2026-07-28"} {
		t.Run(rev, func(t *testing.T) {
			endpoint, hc := serveHTTP(t, gw, rev)
			var hdr map[string]string
			meta := ""
			if rev == "2026-07-28" {
				meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}},`
			} else {
				hdr = map[string]string{"Mcp-Session-Id": initSession(t, hc, endpoint), "MCP-Protocol-Version": rev}
			}
			for i, tc := range cases {
				h := map[string]string{}
				for k, v := range hdr {
					h[k] = v
				}
				if rev == "2026-07-28" {
					h["MCP-Protocol-Version"], h["Mcp-Method"], h["Mcp-Name"] = rev, "tools/call", tc.tool
				}
				resp, err := postJSON(ctx, hc, endpoint, h, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%s"name":%q,"arguments":{}}}`, i+10, meta, tc.tool))
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var got struct {
					Result *struct {
						ResultType string                  `json:"resultType"`
						Content    []struct{ Text string } `json:"content"`
					} `json:"result"`
					Error *struct {
						Code    int64  `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(lastData(body), &got); err != nil {
					t.Fatalf("%s: %v in %s", tc.tool, err, body)
				}
				switch {
				case rev == "2026-07-28" && tc.tool == "m__ask":
					// Bridge 4 relays it (mrtr_test.go).
					if got.Result == nil || got.Result.ResultType != "input_required" {
						t.Errorf("%s: got %s, want the question relayed as input_required", tc.tool, body)
					}
				case tc.tool == "m__ask":
					// Bridge 3 would ask (bridge3_test.go); this client
					// declared no elicitation, so it is not asked.
					if got.Error == nil || got.Error.Code != -32601 || !strings.Contains(got.Error.Message, "did not declare the elicitation capability") {
						t.Errorf("%s: got %s, want -32601: the client did not declare elicitation", tc.tool, body)
					}
				case tc.want == "" && (got.Result == nil || len(got.Result.Content) != 1 || got.Result.Content[0].Text != "done"):
					t.Errorf("%s: got %s, want the text \"done\"", tc.tool, body)
				case tc.want != "" && (got.Error == nil || got.Error.Code != -32603 || got.Error.Message != tc.want):
					t.Errorf("%s: got %s\nwant -32603 %q", tc.tool, body, tc.want)
				}
			}
		})
	}
}

// TestUnrelayedResultRealClients: the Go SDK and mcp-go clients, over
// Streamable HTTP and stdio, pinned to 2025-06-18 and 2026-07-28, get an
// error carrying the same message, and no result, for each unrelayable
// answer; the complete results still read "done".
func TestUnrelayedResultRealClients(t *testing.T) {
	gw, _ := unrelayedGateway(t)
	for _, c := range []string{goSDK, mcpGo} {
		for _, tr := range []string{"http", "stdio"} {
			for _, rev := range []string{"2025-06-18", "2026-07-28"} {
				t.Run(c+" over "+tr+" pinned to "+rev, func(t *testing.T) {
					var conn connection
					if tr == "http" {
						conn.url, conn.http = serveHTTP(t, gw, rev)
					} else {
						conn.reader, conn.writer = serveStdio(t, gw, rev)
					}
					s := connect(t, c, rev, conn)
					for _, tc := range unrelayedCases {
						switch {
						case rev == "2026-07-28" && tc.tool == "m__ask":
							// Relayed (bridge 4) to a client that declared no
							// elicitation: -32021, never the question.
							tc.want = "client capability"
						case tc.tool == "m__ask":
							// Asked (bridge 3) of a client that declared no
							// elicitation: refused before it is asked.
							tc.want = "did not declare the elicitation capability"
						}
						text, isError, err := s.call(t.Context(), tc.tool, map[string]any{})
						switch {
						case tc.want == "" && (err != nil || isError || text != "done"):
							t.Errorf("%s: %q, isError %v, %v; want \"done\"", tc.tool, text, isError, err)
						case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
							t.Errorf("%s: %q, isError %v, %v; want an error saying %q", tc.tool, text, isError, err, tc.want)
						}
					}
				})
			}
		}
	}
}

// lastData is body, or the data of its last SSE event when it is a stream.
func lastData(body []byte) []byte {
	s := string(body)
	i := strings.LastIndex(s, "data: ")
	if i < 0 {
		return body
	}
	s = s[i+len("data: "):]
	if j := strings.IndexByte(s, '\n'); j >= 0 {
		s = s[:j]
	}
	return []byte(s)
}
