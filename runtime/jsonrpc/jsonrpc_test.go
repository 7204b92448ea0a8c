package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unsafe"

	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		batches bool
		code    int64 // 0: no error
		batch   bool
		n       int
	}{
		{"a request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, false, 0, false, 1},
		{"a notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, false, 0, false, 1},
		{"a response", `{"jsonrpc":"2.0","id":"a","result":{}}`, false, 0, false, 1},
		{"not JSON", `{"jsonrpc":`, false, ParseError, false, 1},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"ping"}`, false, InvalidRequest, false, 1},
		{"version spelled with an escape", `{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`, false, 0, false, 1},
		{"version a number", `{"jsonrpc":2.0,"id":1,"method":"ping"}`, false, InvalidRequest, false, 1},
		{"version null", `{"jsonrpc":null,"id":1,"method":"ping"}`, false, InvalidRequest, false, 1},
		{"no version", `{"id":1,"method":"ping"}`, false, InvalidRequest, false, 1},
		{"null id on a request", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, false, InvalidRequest, false, 1},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, false, InvalidRequest, false, 1},
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, false, InvalidRequest, false, 1},
		{"params not an object", `{"jsonrpc":"2.0","id":1,"method":"ping","params":3}`, false, InvalidRequest, false, 1},
		{"result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, false, InvalidRequest, false, 1},
		{"batch where there are none", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, false, InvalidRequest, false, 1},
		{"empty batch", `[]`, true, InvalidRequest, false, 1},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]`, true, 0, true, 2},
		// Member names match exactly: "JSONRPC" is not "jsonrpc".
		{"member name in other case", `{"JSONRPC":"2.0","id":1,"method":"ping"}`, false, InvalidRequest, false, 1},
		// RFC 8259: names SHOULD be unique and text MUST be UTF-8; a message
		// that breaks either is not read (peers' parsers would disagree on it).
		{"duplicate member", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, false, ParseError, false, 1},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}", false, ParseError, false, 1},
		{"invalid UTF-8 in a batch", "[{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}]", true, ParseError, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, errs, batch := Decode([]byte(tc.in), tc.batches)
			if len(msgs) != tc.n || len(errs) != tc.n || batch != tc.batch {
				t.Fatalf("got %d messages, %d errors, batch %v", len(msgs), len(errs), batch)
			}
			if tc.code == 0 && errs[0] != nil {
				t.Errorf("unexpected error %v", errs[0])
			}
			if tc.code != 0 && (errs[0] == nil || errs[0].Code != tc.code) {
				t.Errorf("error = %v, want code %d", errs[0], tc.code)
			}
		})
	}
}

func TestInvalidRequestKeepsItsID(t *testing.T) {
	msgs, errs, _ := Decode([]byte(`{"jsonrpc":"2.0","id":"x","method":5}`), false)
	if errs[0] == nil || msgs[0] == nil || string(msgs[0].ID) != `"x"` {
		t.Fatalf("got %+v %v", msgs[0], errs[0])
	}
}

// FuzzDecode: no input panics; a message that decodes cleanly encodes to
// JSON that decodes to the same message (ids, params and results byte for
// byte after compaction).
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `[{"jsonrpc":"2.0","id":"a","method":"x","params":{}}]`, `{"jsonrpc":"2.0","id":1.5e3,"result":{"a":[1,2]}}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"m","data":null}}`} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, in string, batches bool) {
		msgs, errs, _ := Decode([]byte(in), batches)
		for i, m := range msgs {
			if errs[i] != nil || m == nil {
				continue
			}
			b, err := Encode(m)
			if err != nil {
				t.Fatalf("encode %+v: %v", m, err)
			}
			again, errs2, _ := Decode(b, false)
			if errs2[0] != nil {
				t.Fatalf("re-decode %s: %v", b, errs2[0])
			}
			if !bytes.Equal(compact(m.ID), compact(again[0].ID)) || m.Method != again[0].Method || !bytes.Equal(compact(m.Params), compact(again[0].Params)) {
				t.Fatalf("round trip changed %s into %s", in, b)
			}
		}
	})
}

func compact(b []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return b
	}
	return buf.Bytes()
}

// TestEncodeMatchesMarshal: the hand-built encoding says what json.Marshal
// would, and never spans two lines.
func TestEncodeMatchesMarshal(t *testing.T) {
	for _, m := range []*Message{
		Request(json.RawMessage(`"a"`), "tools/call", json.RawMessage("{\n  \"name\": \"x\"\n}")),
		Notification("notifications/progress", json.RawMessage(`{"progress":1}`)),
		Response(json.RawMessage(`7`), json.RawMessage(`{"tools":[]}`)),
		ErrorResponse(nil, Errorf(InvalidParams, map[string]string{"uri": "x"}, "resource %q \u2028 not found", "x")),
	} {
		got, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(m)
		if bytes.ContainsAny(got, "\r\n") {
			t.Errorf("Encode wrote a line break: %s", got)
		}
		var a, b any
		json.Unmarshal(got, &a)
		json.Unmarshal(want, &b)
		if ga, _ := json.Marshal(a); !bytes.Equal(ga, mustMarshal(b)) {
			t.Errorf("Encode = %s, json.Marshal = %s", got, want)
		}
	}
	batch, _ := EncodeBatch([]*Message{Response(json.RawMessage(`1`), json.RawMessage(`{}`)), Response(json.RawMessage(`2`), json.RawMessage(`{}`))})
	if string(batch) != `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]` {
		t.Errorf("EncodeBatch = %s", batch)
	}
}

func mustMarshal(v any) []byte { b, _ := json.Marshal(v); return b }

// FuzzString: String reads every input exactly as mcpjson.Unmarshal does,
// the shortcut included.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"tools/call"`, `"2026-07-28"`, `""`, `"a\"b"`, `"\u00e9"`, `"é"`, `"tab	"`, `"x" `, ` "x"`, `"x`, `x"`, `7`, `null`, `"\ud800"`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var got, want string
		gotErr, wantErr := String(raw, &got), mcpjson.Unmarshal(raw, &want)
		if (gotErr == nil) != (wantErr == nil) || got != want {
			t.Fatalf("String(%q) = %q, %v; mcpjson.Unmarshal: %q, %v", raw, got, gotErr, want, wantErr)
		}
	})
}

// TestTooDeepIsSaidSo: valid JSON nested more deeply than the decoder
// reads is -32700 with a message that says so, alone or in a batch, not
// "not valid JSON".
func TestTooDeepIsSaidSo(t *testing.T) {
	deep := strings.Repeat("[", mcpjson.MaxDepth) + strings.Repeat("]", mcpjson.MaxDepth)
	one := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + deep + `}}`
	for _, in := range []string{one, "[" + one + "]"} {
		_, errs, _ := Decode([]byte(in), true)
		if e := errs[0]; e == nil || e.Code != ParseError || !strings.Contains(e.Message, "levels deep") {
			t.Errorf("%.30s…: %+v, want -32700 saying it is nested too deeply", in, e)
		}
	}
	if _, errs, _ := Decode([]byte(`{"jsonrpc":`), true); errs[0] == nil || errs[0].Message != "the message is not valid JSON" {
		t.Errorf("malformed JSON: %+v", errs[0])
	}
}

// TestFramed: the three pieces of a result response are Encode's bytes;
// what Encode would change (a line break to compact) or is not a result
// response is not framed.
func TestFramed(t *testing.T) {
	for _, m := range []*Message{
		Response(json.RawMessage(`7`), json.RawMessage(`{"content":[{"type":"text","text":"a\nb"}]}`)),
		Response(json.RawMessage(`"id-\"x\""`), json.RawMessage(`{}`)),
		Response(json.RawMessage(`-1.5e3`), json.RawMessage(`[1,2]`)),
	} {
		head, result, tail, ok := Framed(m)
		want, err := Encode(m)
		if err != nil || !ok {
			t.Fatalf("%s: ok %v, Encode: %v", m.ID, ok, err)
		}
		if got := string(head) + string(result) + string(tail); got != string(want) {
			t.Errorf("Framed = %s, Encode = %s", got, want)
		}
		if &result[0] != &m.Result[0] {
			t.Errorf("%s: the result was copied", m.ID)
		}
	}
	for _, m := range []*Message{
		Response(json.RawMessage(`1`), json.RawMessage("{\n\"a\": 1}")),
		Response(json.RawMessage(`1`), json.RawMessage("{\r\"a\": 1}")),
		ErrorResponse(json.RawMessage(`1`), &Error{Code: InternalError, Message: "x"}),
		Request(json.RawMessage(`1`), "tools/call", json.RawMessage(`{}`)),
		Notification("notifications/progress", json.RawMessage(`{}`)),
	} {
		if _, _, _, ok := Framed(m); ok {
			t.Errorf("Framed(%+v): ok, want Encode", m)
		}
	}
}

// TestFramedRequest: the three pieces of a request or notification are
// Encode's bytes; what Encode would change, or what has no params, is not
// framed.
func TestFramedRequest(t *testing.T) {
	for _, m := range []*Message{
		Request(json.RawMessage(`7`), "tools/call", json.RawMessage(`{"name":"echo","arguments":{"text":"a\\nb"}}`)),
		Request(json.RawMessage(`"id-\"x\""`), "x/\"odd\"\u2028", json.RawMessage(`{}`)),
		Notification("notifications/progress", json.RawMessage(`{"progress":1}`)),
	} {
		head, params, tail, ok := FramedRequest(m)
		want, err := Encode(m)
		if err != nil || !ok {
			t.Fatalf("%s: ok %v, Encode: %v", m.Method, ok, err)
		}
		if got := string(head) + string(params) + string(tail); got != string(want) {
			t.Errorf("FramedRequest = %s, Encode = %s", got, want)
		}
		if &params[0] != &m.Params[0] {
			t.Errorf("%s: the params were copied", m.Method)
		}
	}
	for _, m := range []*Message{
		Request(json.RawMessage(`1`), "tools/call", json.RawMessage("{\n\"a\": 1}")),
		Request(json.RawMessage(`1`), "tools/call", json.RawMessage("{\r\"a\": 1}")),
		Request(json.RawMessage(`1`), "ping", nil),
		Response(json.RawMessage(`1`), json.RawMessage(`{}`)),
		ErrorResponse(json.RawMessage(`1`), &Error{Code: InternalError, Message: "x"}),
	} {
		if _, _, _, ok := FramedRequest(m); ok {
			t.Errorf("FramedRequest(%+v): ok, want Encode", m)
		}
	}
}

// TestParamsDecoded: params Decode read are known as such; a message
// put together, or params put into a decoded message or its copy, are not.
func TestParamsDecoded(t *testing.T) {
	msgs, errs, _ := Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`), false)
	if errs[0] != nil || !msgs[0].ParamsDecoded() {
		t.Fatalf("decoded: %v, %v", errs[0], msgs[0].ParamsDecoded())
	}
	cp := *msgs[0]
	cp.Params = json.RawMessage(`{"name":"y"}`)
	for _, m := range []*Message{&cp, Request(json.RawMessage(`1`), "tools/call", json.RawMessage(`{}`)), nil} {
		if m.ParamsDecoded() {
			t.Errorf("%+v: decoded, want not", m)
		}
	}
	msgs, _, _ = Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), false)
	if msgs[0].ParamsDecoded() {
		t.Error("no params: decoded")
	}
}

// TestMessageSize: a message is at most 144 bytes, its size class (ParamsDecoded's
// mark is a pointer).
func TestMessageSize(t *testing.T) {
	if n := unsafe.Sizeof(Message{}); n > 144 {
		t.Errorf("a Message is %d bytes, more than 144", n)
	}
}
