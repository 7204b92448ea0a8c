package gatewaytest

// The question matrix of issue 12: every bridge (1-4) x kind of question
// (elicitation form, elicitation URL, sampling, roots) x client transport
// (HTTP, stdio) x upstream (era and transport), one subtest each, e.g.
//
//	go test -run 'TestQuestionMatrix/bridge1/sampling/stdio' ./runtime/gatewaytest/
//
// Each leaf checks both halves of "only what the client declared is
// asked": a client that declared the capability is asked once and its
// answer reaches the upstream (in the upstream's tool result); a client
// that did not declare it is never asked and the refusal carries the code
// its page gives (-32601 for a capability missing altogether, -32602 for
// an elicitation mode not declared; -32021 for a 2026-07-28 client).
//
// Bridges 1 and 2 run against the hand-written legacy askers of
// questions_test.go (2024-11-05 over stdio, 2025-03-26 over Streamable
// HTTP: sampling and roots only; 2025-06-18 and 2025-11-25 over both;
// URL mode only from 2025-11-25, the first revision that has it); bridges 3 and 4 against a hand-written 2026-07-28 upstream
// (modernAskerServe) over Streamable HTTP and stdio. Bridges 1 and 3 use a 2025-11-25 legacy client (askingClient),
// bridges 2 and 4 a 2026-07-28 one (modernClient); everything mcpx sends
// either side is validated closed-world by the helpers.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
)

// matrixKind is one kind of question.
type matrixKind struct {
	name   string // the subtest name
	tool   string // the legacy asker's tool that asks it
	method string
	answer string // what reaches the upstream when the client answers
	// declares and lacks are the client's capabilities with and without
	// what the question needs (for a 2025-11-25 client; the 2026-07-28
	// client declares the same in _meta).
	declares, lacks string
	// code is the legacy refusal when lacks is declared.
	code int64
}

var matrixKinds = []matrixKind{
	{"elicitation-form", "elicit", "elicitation/create", `"name":"Ada"`,
		`{"elicitation":{"form":{}}}`, `{"sampling":{},"roots":{}}`, -32601},
	{"elicitation-url", "elicit_url", "elicitation/create", `{"action":"accept"}`,
		`{"elicitation":{"url":{}}}`, `{"elicitation":{"form":{}}}`, -32602},
	{"sampling", "sample", "sampling/createMessage", `"text":"sampled hi"`,
		`{"sampling":{}}`, `{"elicitation":{"form":{}},"roots":{}}`, -32601},
	{"roots", "roots", "roots/list", `"uri":"file:///work"`,
		`{"roots":{"listChanged":true}}`, `{"elicitation":{"form":{}},"sampling":{}}`, -32601},
}

// matrixLegacy are the legacy upstreams of bridges 1 and 2, as namespaces.
var matrixLegacy = []askUpstream{
	{ns: "s1105", rev: "2024-11-05"},
	{ns: "h0326", rev: "2025-03-26", http: true},
	{ns: "s0618", rev: "2025-06-18"},
	{ns: "h0618", rev: "2025-06-18", http: true},
	{ns: "s1125", rev: "2025-11-25"},
	{ns: "h1125", rev: "2025-11-25", http: true},
}

func upName(u askUpstream) string {
	if u.http {
		return "up-" + u.rev + "-http"
	}
	return "up-" + u.rev + "-stdio"
}

// hasKind reports whether u's revision can ask k, from its tables:
// elicitation from 2025-06-18, its URL mode from 2025-11-25.
func hasKind(u askUpstream, k matrixKind) bool {
	tab := revision.Lookup(mcp.Revision(u.rev))
	if _, ok := tab.Method(k.method); !ok {
		return false
	}
	return k.name != "elicitation-url" || slices.Contains(tab.ClientCapabilities, "elicitation.url")
}

// matrixQuestions are what matrixModern's tools ask (inputRequests
// entries as written), by tool.
var matrixQuestions = map[string]string{
	"q_elicit":     askName,
	"q_elicit_url": askURL,
	"q_sample":     askSampling,
	"q_roots":      askRoots,
}

// matrixModern is the 2026-07-28 upstream of bridges 3 and 4 over HTTP:
// tool q_<tool of the kind> asks key "q" that question under its own
// state, and its retry answers the raw inputResponses["q"] as its text.
func matrixModern(t *testing.T) string {
	return modernAsker(t, matrixQuestions)
}

// modernAsker is a 2026-07-28 HTTP upstream whose tool name asks key "q"
// questions[name] (an inputRequests entry as written) under its own state,
// and whose retry answers the raw inputResponses["q"] as its text.
func modernAsker(t *testing.T, questions map[string]string) string {
	return rawModernUpstream(t, modernAskerServe(questions))
}

func modernAskerServe(questions map[string]string) func(*http.Request, *rawCall, rawReply) {
	names := make([]string, 0, len(questions))
	for n := range questions {
		names = append(names, n)
	}
	slices.Sort(names)
	return func(_ *http.Request, m *rawCall, reply rawReply) {
		switch {
		case m.Method == "server/discover":
			reply.result(discoverResult("raw-matrix", `{"tools":{}}`))
		case m.Method == "tools/list":
			reply.result(toolsResult(names...))
		case m.Method == "tools/call" && questions[m.Params.Name] != "":
			switch got := m.Params.InputResponses["q"]; {
			case m.Params.RequestState == nil:
				reply.result(askResult(upSecret+m.Params.Name, "q", questions[m.Params.Name]))
			case m.state() != upSecret+m.Params.Name:
				reply.error(-32602, "the upstream got requestState "+m.state())
			case got == nil:
				reply.result(askResult(upSecret+m.Params.Name, "q", questions[m.Params.Name]))
			default:
				b, _ := json.Marshal(string(got))
				reply.result(`{"resultType":"complete","content":[{"type":"text","text":` + string(b) + `}]}`)
			}
		default:
			reply.error(-32601, "no "+m.Method+" here")
		}
	}
}

// serveModernAsker is modernAskerServe over stdio (mode modernasker), with
// the matrix's questions and questions_content_test.go's.
func serveModernAsker() int {
	questions := maps.Clone(matrixQuestions)
	for tool, q := range contentQuestions {
		questions[tool] = `{"method":"` + q.method + `","params":` + q.params + `}`
	}
	serve := modernAskerServe(questions)
	out := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(recordedStdin(nil))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m rawCall
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil || m.Method == "" {
			continue
		}
		rec := httptest.NewRecorder()
		serve(nil, &m, rawReply{w: rec, id: m.ID})
		out.Write(append(bytes.TrimSpace(rec.Body.Bytes()), '\n'))
		if out.Flush() != nil {
			return 1
		}
	}
	return 0
}

// modernMetaWith is modernMeta declaring caps instead.
func modernMetaWith(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"mrtr-test","version":"1"},"io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

// callWith is a 2026-07-28 tools/call of tool by c declaring caps, with
// extra members (a retry's) appended to the params.
func (c *modernClient) callWith(caps, tool, extra string) mrtrAnswer {
	c.t.Helper()
	c.id++
	raw := c.send(c.id, "tools/call", tool, "{"+modernMetaWith(caps)+fmt.Sprintf(`,"name":%q,"arguments":{"x":1}`, tool)+extra+"}")
	a := mrtrAnswer{raw: string(raw)}
	if err := json.Unmarshal(raw, &a); err != nil {
		c.t.Fatalf("%s: %v in %s", tool, err, raw)
	}
	return a
}

// modernRound calls tool as a 2026-07-28 client declaring caps: it
// expects one input_required question of method, answers it as
// askingClient would, retries, and returns the final answer and the
// question as sent.
func modernRound(t *testing.T, c *modernClient, caps, tool, method string) (mrtrAnswer, string) {
	t.Helper()
	a := c.callWith(caps, tool, "")
	if a.Result == nil || a.Result.ResultType != "input_required" || len(a.Result.InputRequests) != 1 || a.Result.RequestState == nil {
		t.Fatalf("%s: got %s, want input_required with one question and a state", tool, a.raw)
	}
	var key, q string
	for k, v := range a.Result.InputRequests {
		key, q = k, string(v)
	}
	var head struct{ Method string }
	json.Unmarshal([]byte(q), &head)
	if head.Method != method {
		t.Fatalf("%s: inputRequests[%s] = %s, want a %s", tool, key, q, method)
	}
	answer := clientAnswer(method)
	if strings.Contains(q, `"mode":"url"`) {
		answer = `{"action":"accept"}`
	}
	b := c.callWith(caps, tool, fmt.Sprintf(`,"requestState":%q,"inputResponses":{%q:%s}`, *a.Result.RequestState, key, answer))
	return b, q
}

// modernMatrixGateway fronts the 2026-07-28 askers: "m" over HTTP
// (matrixModern), "ms" over stdio (serveModernAsker, what mcpx sent it
// checked closed-world when the test ends).
func modernMatrixGateway(t *testing.T) *gateway.Gateway {
	t.Helper()
	rec := filepath.Join(t.TempDir(), "ms.in")
	doc, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"m":  map[string]any{"url": matrixModern(t)},
		"ms": map[string]any{"command": os.Args[0], "env": map[string]string{envUpstream: "modernasker", envRecord: rec}},
	}})
	gw, _ := readyGateway(t, "matrix.json", string(doc), upSecret, func() {
		checkUpstreamWire(t, upstream{ns: "ms", rev: "2026-07-28", record: rec})
	})
	return gw
}

func TestQuestionMatrix(t *testing.T) {
	legacyGW, _ := askGateway(t, matrixLegacy...)
	modernGW := modernMatrixGateway(t)
	transports := []string{"http", "stdio"}
	legacyClient := func(t *testing.T, gw *gateway.Gateway, tr, caps string) *askingClient {
		return b3Client(t, gw, tr, "2025-11-25", caps)
	}

	// Bridges 1 and 3: a legacy client is asked by request.
	byRequest := func(t *testing.T, gw *gateway.Gateway, tr, tool string, k matrixKind) {
		c := legacyClient(t, gw, tr, k.declares)
		got := c.call(tool)
		if !strings.Contains(got, k.answer) {
			t.Errorf("%s: got %q, want the client's answer (%s)", tool, got, k.answer)
		}
		q := c.asked()
		if len(q) != 1 || q[0].Method != k.method || !strings.HasPrefix(string(q[0].ID), `"mcpx-q-`) {
			t.Fatalf("%s: the client was asked %+v, want one %s with an id of mcpx's", tool, q, k.method)
		}
		if k.name == "elicitation-url" && !strings.Contains(string(q[0].Params), `"elicitationId":`) {
			t.Errorf("%s: a 2025-11-25 URL-mode request without elicitationId: %s", tool, q[0].Params)
		}
		for _, never := range []string{"inputRequests", "requestState", upSecret} {
			if strings.Contains(string(q[0].Params), never) {
				t.Errorf("%s: the legacy client's question carries %q: %s", tool, never, q[0].Params)
			}
		}
		lacking := legacyClient(t, gw, tr, k.lacks)
		want := fmt.Sprintf("error %d: ", k.code)
		if got := lacking.call(tool); !strings.HasPrefix(got, want) || !strings.Contains(got, "did not declare") {
			t.Errorf("%s to a client declaring %s: got %q, want %q... did not declare", tool, k.lacks, got, want)
		}
		if q := lacking.asked(); len(q) != 0 {
			t.Errorf("%s: a client that did not declare it was asked %+v", tool, q)
		}
	}

	// Bridges 2 and 4: a 2026-07-28 client is asked by input_required.
	byResult := func(t *testing.T, gw *gateway.Gateway, tr, tool string, k matrixKind, lackingCode int64) {
		c := newModernClient(t, gw, tr)
		b, q := modernRound(t, c, k.declares, tool, k.method)
		if got := text(b); !strings.Contains(got, k.answer) {
			t.Errorf("%s: the retry got %s, want the client's answer (%s)", tool, b.raw, k.answer)
		}
		if strings.Contains(q, "elicitationId") {
			t.Errorf("%s: a 2026-07-28 client was sent an elicitationId: %s", tool, q)
		}
		a := newModernClient(t, gw, tr).callWith(k.lacks, tool, "")
		switch {
		case lackingCode == -32021:
			if a.Error == nil || a.Error.Code != -32021 {
				t.Errorf("%s to a client declaring %s: got %s, want -32021", tool, k.lacks, a.raw)
			}
		default: // bridge 2: the upstream gets the refusal, its result says so
			want := fmt.Sprintf("error %d: ", lackingCode)
			if got := text(a); !strings.HasPrefix(got, want) || !strings.Contains(got, "did not declare") {
				t.Errorf("%s to a client declaring %s: got %s, want the upstream's result carrying %q", tool, k.lacks, a.raw, want)
			}
		}
		for _, never := range []string{upSecret} {
			if strings.Contains(c.got.String(), never) {
				t.Errorf("%s: the client received %q", tool, never)
			}
		}
	}

	for _, k := range matrixKinds {
		for _, tr := range transports {
			for _, u := range matrixLegacy {
				if !hasKind(u, k) {
					continue
				}
				t.Run("bridge1/"+k.name+"/"+tr+"/"+upName(u), func(t *testing.T) {
					byRequest(t, legacyGW, tr, u.ns+"__"+k.tool, k)
				})
				t.Run("bridge2/"+k.name+"/"+tr+"/"+upName(u), func(t *testing.T) {
					byResult(t, legacyGW, tr, u.ns+"__"+k.tool, k, k.code)
				})
			}
			for _, up := range []string{"http", "stdio"} {
				ns := map[string]string{"http": "m", "stdio": "ms"}[up]
				t.Run("bridge3/"+k.name+"/"+tr+"/up-2026-07-28-"+up, func(t *testing.T) {
					byRequest(t, modernGW, tr, ns+"__q_"+k.tool, k)
				})
				t.Run("bridge4/"+k.name+"/"+tr+"/up-2026-07-28-"+up, func(t *testing.T) {
					byResult(t, modernGW, tr, ns+"__q_"+k.tool, k, -32021)
				})
			}
		}
	}
}
