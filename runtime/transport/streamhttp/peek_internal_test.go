package streamhttp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// peekByUnmarshal is readPeek as it was: mcpjson.UnmarshalShared into a
// peek, the decoder's own way; readPeek must read the same.
func peekByUnmarshal(params json.RawMessage) *peek {
	p := new(peek)
	if len(params) > 0 && params[0] == '{' {
		p.read = mcpjson.UnmarshalShared(params, p) == nil
	}
	return p
}

var peekCases = []string{
	``, `null`, `[]`, `"x"`, `{}`, ` {}`, `{} `,
	`{"name":"echo"}`,
	`{"name":"echo","arguments":{"a":1,"b":[1,2,{"c":null}]},"_meta":{"progressToken":1}}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"query","arguments":{"region":"eu"}}`,
	`{"uri":"test://a b","taskId":"t1","other":{"deep":[[[]]]},"x":"y"}`,
	`{"_meta":null}`, `{"_meta":{}}`, `{"_meta":5}`, `{"name":"a","_meta":"x","uri":"u"}`, `{"_meta":[],"name":"a"}`,
	`{"name":null,"uri":null,"taskId":null,"arguments":null}`,
	`{"n\u0061me":"escaped name","\u005fmeta":{"k\u0065y":"v","a\"b":1}}`,
	`{"Name":"case","URI":"u","_META":{}}`,
	`{"name":"a","name":"b"}`, `{"_meta":{"a":1,"a":2}}`, `{"_meta":{},"_meta":{}}`,
	`{"name":"\ud800"}`, "{\"name\":\"\xff\"}", "{\"x\":\"\xff\"}", "{\"_meta\":{\"\xff\":1}}",
	`{"name":"a",}`, `{"name":"a"`, `{"name":"a"} x`, `{"name":"a"}{}`, `{"name"}`, `{1:2}`,
	`{"arguments":{"text":"` + string(bytes.Repeat([]byte(`line\n`), 400)) + `"}}`,
	`{"a-member-name-that-is-much-longer-than-sixty-four-bytes-once-unquoted-\u0041\u0042":1,"name":"n"}`,
	`{"_meta":{"a-key-that-is-much-longer-than-sixty-four-bytes-once-unquoted-so-it-grows-\u0041":1}}`,
}

// TestReadPeekIsUnmarshal: readPeek reads what UnmarshalShared read, the
// same members when the params do not fit, and its raw values are slices
// of the params.
func TestReadPeekIsUnmarshal(t *testing.T) {
	for _, c := range peekCases {
		checkPeek(t, []byte(c))
	}
}

func checkPeek(t *testing.T, params []byte) {
	t.Helper()
	checkPeekOf(t, "readPeek", readPeek, params)
	// Params jsonrpc.Decode read (valid JSON) are looked through
	// (mcpjson.Members) rather than decoded, short or long.
	if jsontext.Value(params).IsValid() {
		checkPeekOf(t, "readDecoded", readDecodedPeek, params)
	}
	if long := paddedParams(params); long != nil && jsontext.Value(long).IsValid() {
		checkPeekOf(t, "readDecoded", readDecodedPeek, long)
	}
}

// readDecodedPeek is readPeek by readDecoded.
func readDecodedPeek(params json.RawMessage) *peek {
	p := new(peek)
	p.readDecoded(params)
	return p
}

// paddedParams is params, an object, with a member of mcpjson.ScanMin
// bytes put first; nil if params is not an object.
func paddedParams(params []byte) []byte {
	t := bytes.TrimLeft(params, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return nil
	}
	pad := `{"pad":"` + strings.Repeat("x", mcpjson.ScanMin) + `"`
	if rest := bytes.TrimLeft(t[1:], " \t\r\n"); len(rest) > 0 && rest[0] == '}' {
		return append([]byte(pad), rest...)
	}
	return append([]byte(pad+`,`), t[1:]...)
}

func checkPeekOf(t *testing.T, how string, read func(json.RawMessage) *peek, params []byte) {
	t.Helper()
	got, want := read(params), peekByUnmarshal(params)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s(%.100q) = %+v, want %+v", how, params, *got, *want)
		return
	}
	for _, v := range []json.RawMessage{got.Name, got.URI, got.TaskID, got.Arguments} {
		if len(v) > 0 && !within(v, params) {
			t.Errorf("%s(%.100q): %q is a copy, not a slice of the params", how, params, v)
		}
	}
	for k, v := range got.Meta {
		if len(v) > 0 && !within(v, params) {
			t.Errorf("%s(%.100q): _meta %q is a copy", how, params, k)
		}
	}
}

func within(v, b []byte) bool {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
	return p >= start && p+uintptr(len(v)) <= start+uintptr(len(b))
}

// FuzzReadPeek: the same as UnmarshalShared for any params a message
// can have (valid JSON: jsonrpc.Decode refuses the rest); for anything
// else both fail, the members read before the error aside.
func FuzzReadPeek(f *testing.F) {
	for _, c := range peekCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if jsontext.Value(s).IsValid() {
			checkPeek(t, []byte(s))
			return
		}
		if got, want := readPeek([]byte(s)), peekByUnmarshal([]byte(s)); got.read || want.read {
			t.Errorf("readPeek(%q): read %v, UnmarshalShared read %v", s, got.read, want.read)
		}
	})
}

// TestReadDecodedScans: params, short or long, are looked through by
// Members, not decoded (it fails if every case went readFrom's way).
func TestReadDecodedScans(t *testing.T) {
	for _, c := range []string{
		`{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`,
		`{"uri":"file:///a","_meta":null}`,
		`{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 64<<10) + `"}}`,
		`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":7},"name":"q","arguments":{"t":"` + strings.Repeat("y", mcpjson.ScanMin) + `"}}`,
	} {
		var p peek
		if !p.scan([]byte(c)) {
			t.Errorf("%.60q: not looked through", c)
		}
		checkPeek(t, []byte(c))
	}
}

func BenchmarkReadPeek(b *testing.B) {
	params := []byte(`{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`)
	b.Run("tokens", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			readPeek(params)
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			peekByUnmarshal(params)
		}
	})
	b.Run("decoded", func(b *testing.B) { // Members: what post reads
		b.ReportAllocs()
		for range b.N {
			readDecodedPeek(params)
		}
	})
}
