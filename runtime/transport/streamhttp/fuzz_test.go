package streamhttp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
)

// fuzzNS is fakeNS without the tools that panic on purpose or wait for
// the client: a panic reaching the handler is what the fuzz target looks
// for, and a call held open would only slow it down.
type fuzzNS struct{ fakeNS }

func (n fuzzNS) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	switch p.Name {
	case "boom", "wait", "slow":
		return text(p.Name), nil
	}
	return n.fakeNS.CallTool(ctx, p)
}

// panicLog records whether the handler logged a panic it recovered.
type panicLog struct {
	slog.Handler
	panicked *bool
}

func (l panicLog) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "panic") {
		*l.panicked = true
	}
	return nil
}

// sessionPlaceholder in a fuzzed Mcp-Session-Id stands for the id of the
// legacy session opened before each request, so that the fuzzer reaches
// the session paths too.
const sessionPlaceholder = "@session"

// saneStatus is every status the endpoint may answer with. 500 is not in
// it: the handler answers 500 only after recovering a panic.
var saneStatus = []int{
	http.StatusOK, http.StatusAccepted, http.StatusNoContent,
	http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound,
	http.StatusMethodNotAllowed, http.StatusNotAcceptable, http.StatusRequestTimeout,
	http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
	http.StatusServiceUnavailable,
}

// FuzzPost sends one HTTP request, headers and body together, to the
// endpoint and checks what comes back: no panic, a status from
// saneStatus, a JSON-RPC error object on every 4xx and 5xx, and every
// JSON message (the JSON body, or each SSE event's data) a valid JSON-RPC
// response or error with a code from runtime/jsonrpc's table (or, on a
// stream, a notification).
func FuzzPost(f *testing.F) {
	const (
		ctJSON = "application/json"
		accept = "application/json, text/event-stream"
		meta   = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	)
	seeds := []struct {
		method, ct, accept, version, session, mcpMethod, mcpName, body string
	}{
		{"POST", ctJSON, accept, "", "", "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{"POST", ctJSON, accept, "2025-11-25", sessionPlaceholder, "", "", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
		{"POST", ctJSON, accept, "2025-11-25", sessionPlaceholder, "", "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"POST", ctJSON, accept, "2025-11-25", sessionPlaceholder, "", "", `{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"t"}}}`},
		{"POST", ctJSON, "text/event-stream", "2025-06-18", sessionPlaceholder, "", "", `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"test://a b"}}`},
		{"POST", ctJSON, accept, "", "", "", "", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`},
		{"POST", ctJSON, accept, "2026-07-28", "", "tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`},
		{"POST", ctJSON, accept, "2026-07-28", "", "tools/call", "query", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"query","arguments":{"region":"eu"},` + meta + `}}`},
		{"POST", ctJSON, accept, "2026-07-28", "", "tools/call", "late", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"late",` + meta + `,"_meta":{}}}`},
		{"POST", ctJSON, accept, "2026-07-28", "", "subscriptions/listen", "", `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{` + meta + `}}`},
		{"POST", ctJSON, accept, "2026-07-28", "", "ping", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`},
		{"POST", "text/plain", accept, "", "", "", "", `{}`},
		{"POST", ctJSON, "image/png", "", "", "", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"POST", ctJSON, accept, "1999-01-01", "", "", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"POST", ctJSON, accept, "", "nope", "", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"POST", ctJSON, accept, "", "", "", "", `{"jsonrpc":"2.0","id":1,"method":"ping"`},
		{"POST", ctJSON, accept, "", "", "", "", `[]`},
		{"POST", ctJSON, accept, "", "", "", "", `{"jsonrpc":"2.0","id":{},"method":"ping"}`},
		{"GET", "", "text/event-stream", "2025-11-25", sessionPlaceholder, "", "", ""},
		{"DELETE", "", "", "", sessionPlaceholder, "", "", ""},
		{"PUT", ctJSON, accept, "", "", "", "", `{}`},
	}
	for _, s := range seeds {
		f.Add(s.method, s.ct, s.accept, s.version, s.session, s.mcpMethod, s.mcpName, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, ct, acc, version, session, mcpMethod, mcpName string, body []byte) {
		req, err := http.NewRequest(method, "http://127.0.0.1/mcp", bytes.NewReader(body))
		if err != nil {
			t.Skip("not a request net/http would send")
		}
		panicked := false
		h := streamhttp.New(&edge.Edge{Server: &server.Server{NS: fuzzNS{}, Info: mcp.Implementation{Name: "mcpx-fuzz", Version: "0"}, TTLMs: 1000}},
			streamhttp.Options{MaxBody: 64 << 10, Logger: slog.New(panicLog{slog.DiscardHandler, &panicked})})
		defer h.Close()
		sid := openFuzzSession(t, h)
		for name, v := range map[string]string{
			"Content-Type": ct, "Accept": acc, "MCP-Protocol-Version": version,
			"Mcp-Session-Id": strings.ReplaceAll(session, sessionPlaceholder, sid),
			"Mcp-Method":     mcpMethod, "Mcp-Name": mcpName,
		} {
			if v == "" {
				continue
			}
			if !validHeaderValue(v) {
				t.Skip("a header value net/http would not deliver")
			}
			req.Header.Set(name, v)
		}
		// A held stream (GET, subscriptions/listen) ends with the request.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		req = req.WithContext(ctx)

		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		if panicked {
			t.Fatalf("the handler recovered a panic; status %d, body %.300s", rec.Code, rec.Body.Bytes())
		}
		if !slices.Contains(saneStatus, rec.Code) {
			t.Fatalf("status %d; body %.300s", rec.Code, rec.Body.Bytes())
		}
		out := rec.Body.Bytes()
		mt, _, _ := strings.Cut(rec.Header().Get("Content-Type"), ";")
		switch {
		case mt == "application/json":
			checkJSONAnswer(t, out, body, rec.Code >= 400)
		case mt == "text/event-stream":
			if rec.Code != http.StatusOK {
				t.Fatalf("an SSE stream with status %d", rec.Code)
			}
			checkStream(t, out)
		case rec.Code >= 400:
			t.Fatalf("status %d without a JSON-RPC error; Content-Type %q, body %.300s", rec.Code, rec.Header().Get("Content-Type"), out)
		case len(out) != 0:
			t.Fatalf("a body of Content-Type %q: %.300s", rec.Header().Get("Content-Type"), out)
		}
	})
}

// openFuzzSession initializes a legacy session on h and returns its id.
func openFuzzSession(t *testing.T, h *streamhttp.Handler) string {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(initialize("2025-11-25")))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	sid := rec.Header().Get("Mcp-Session-Id")
	if rec.Code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %s", rec.Code, rec.Body.Bytes())
	}
	return sid
}

// validHeaderValue reports whether net/http would send v as a header
// value: no control characters but tab, no leading or trailing space
// (which a server trims).
func validHeaderValue(v string) bool {
	if strings.TrimSpace(v) != v {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// checkJSONAnswer checks a JSON body: one response, or (to a batch) an
// array of them; an error status must carry a single error response. A
// single answer to a request whose id could be read carries that id (or
// null, when it could not be read).
func checkJSONAnswer(t *testing.T, out, in []byte, errorStatus bool) {
	t.Helper()
	if len(out) > 0 && out[0] == '[' {
		if errorStatus {
			t.Fatalf("an error status with a batch answer: %.300s", out)
		}
		var arr []json.RawMessage
		if err := json.Unmarshal(out, &arr); err != nil || len(arr) == 0 {
			t.Fatalf("a batch answer that is not a non-empty array: %.300s", out)
		}
		for _, m := range arr {
			checkMessage(t, m, false)
		}
		return
	}
	m := checkMessage(t, out, false)
	if errorStatus && m.Error == nil {
		t.Fatalf("an error status without a JSON-RPC error: %.300s", out)
	}
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(in, &req) == nil && isID(req.ID) && string(m.ID) != "null" && !sameJSON(m.ID, req.ID) {
		t.Fatalf("answer id %s, request id %s", m.ID, req.ID)
	}
}

// checkStream checks an SSE response: every event is a message event
// whose data is a notification, a response or a batch's array of
// responses; the answer comes last.
func checkStream(t *testing.T, out []byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	answered := false
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		if answered {
			t.Fatalf("an event after the response: %.300s", out)
		}
		if strings.HasPrefix(data, "[") {
			// A 2025-03-26 batch's answer: one event holding the array.
			var arr []json.RawMessage
			if err := json.Unmarshal([]byte(data), &arr); err != nil || len(arr) == 0 {
				t.Fatalf("a batch answer that is not a non-empty array: %.300s", out)
			}
			for _, m := range arr {
				checkMessage(t, m, false)
			}
			answered = true
			continue
		}
		if m := checkMessage(t, []byte(data), true); m.Method == "" {
			answered = true
		}
	}
}

// checkMessage checks one JSON-RPC message: "2.0"; a notification (when
// allowed) or a response with an id and exactly one of result and error,
// an error's code from the table and its message not empty.
func checkMessage(t *testing.T, b []byte, notification bool) *jsonrpc.Message {
	t.Helper()
	var m jsonrpc.Message
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("not a JSON-RPC message (%v): %.300s", err, b)
	}
	if m.JSONRPC != "2.0" {
		t.Fatalf("jsonrpc %q: %.300s", m.JSONRPC, b)
	}
	if m.Method != "" {
		if !notification || m.ID != nil || m.Error != nil || m.Result != nil {
			t.Fatalf("a request or notification where a response belongs: %.300s", b)
		}
		return &m
	}
	if !isID(m.ID) && !(string(m.ID) == "null" && m.Error != nil) {
		t.Fatalf("a response without a valid id: %.300s", b)
	}
	if (m.Result == nil) == (m.Error == nil) {
		t.Fatalf("a response needs exactly one of result and error: %.300s", b)
	}
	if m.Error != nil {
		if !slices.Contains(jsonrpc.Codes, m.Error.Code) {
			t.Fatalf("error code %d is not in runtime/jsonrpc's table: %.300s", m.Error.Code, b)
		}
		if m.Error.Message == "" {
			t.Fatalf("an error without a message: %.300s", b)
		}
	}
	return &m
}

// isID reports whether id is a JSON-RPC request id: a string or a number.
func isID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9'))
}

// sameJSON compares two JSON values, numbers by their text.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
