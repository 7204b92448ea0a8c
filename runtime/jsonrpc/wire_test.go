package jsonrpc

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// reflectWire is wire without its UnmarshalJSONFrom: the decoder reads it
// by reflection, as it read every message before.
type reflectWire struct {
	JSONRPC shared `json:"jsonrpc"`
	ID      shared `json:"id"`
	Method  shared `json:"method"`
	Params  shared `json:"params"`
	Result  shared `json:"result"`
	Error   shared `json:"error"`
}

// decodeReflect is decodeOne as it was, by reflection.
func decodeReflect(b []byte) (wire, error, *Message, *Error) {
	var r reflectWire
	err := mcpjson.Unmarshal(b, &r)
	w := wire(r)
	m, e := w.message(b, err)
	return w, err, m, e
}

var wireSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":"a","result":{}}`,
	`{"jsonrpc":`,
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`,
	`{"jsonrpc":2.0,"id":1,"method":"ping"}`,
	`{"jsonrpc":null,"id":1,"method":"ping"}`,
	`{"id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"method":""}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":3}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`,
	`{"JSONRPC":"2.0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}",
	`{"jsonrpc":"2.0","id":"x","method":5}`,
	`{"jsonrpc":"2.0","id":1.5e3,"result":{"a":[1,2]}}`,
	`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"m","data":null}}`,
	`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"x"}}`,
	// Escaped names, unknown members and their duplicates, other shapes.
	`{"\u006asonrpc":"2.0","\u0069d":7,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"\u0069d":2,"method":"x"}`,
	`{"jsonrpc":"2.0","x":1,"x":2,"id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","x":{"a":1,"a":2},"id":1,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":1,"a":2}}`,
	"{\"jsonrpc\":\"2.0\",\"x\":\"\xff\",\"id\":1,\"method\":\"x\"}",
	`{"jsonrpc":"2.0","id":-1,"method":"x","params":[1]}`,
	`{"jsonrpc":"2.0","id":true,"method":"x"}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"error":null}`,
	`{"jsonrpc":"2.0","id":1,"result":null}`,
	` {"jsonrpc" : "2.0" , "id" : 1 , "method" : "x" } `,
	`{"jsonrpc":"2.0","id":1,"method":"x"} x`,
	`{"jsonrpc":"2.0","id":1,"method":"x"}{}`,
	`{"jsonrpc":"2.0","id":1,"method":"x",}`,
	`{"jsonrpc":"2.0" "id":1}`,
	`{1:2}`,
	`{}`, `null`, `"x"`, `3`, `3 x`, `true`, `"abc`, `tru`, ``, ` `, `}`, `[1]`, `[`,
	`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + strings.Repeat("[", mcpjson.MaxDepth) + strings.Repeat("]", mcpjson.MaxDepth) + `}}`,
	`{"x":` + strings.Repeat("[", mcpjson.MaxDepth) + strings.Repeat("]", mcpjson.MaxDepth) + `}`,
}

// FuzzDecodeMatchesReflection: wire's UnmarshalJSONFrom reads every input
// as the decoder's reflection did: the same members (the same slices of
// the input), the same kind of error (syntactic, too deep, or not), and so
// the same message and JSON-RPC error.
func FuzzDecodeMatchesReflection(f *testing.F) {
	for _, s := range wireSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var w wire
		err := mcpjson.Unmarshal(b, &w)
		m, e := w.message(b, err)
		rw, rerr, rm, re := decodeReflect(b)
		if (err == nil) != (rerr == nil) || mcpjson.IsSyntax(err) != mcpjson.IsSyntax(rerr) || mcpjson.IsTooDeep(err) != mcpjson.IsTooDeep(rerr) {
			t.Fatalf("%q: error %v, by reflection %v", b, err, rerr)
		}
		if err == nil {
			for i, f := range []struct{ a, b shared }{{w.JSONRPC, rw.JSONRPC}, {w.ID, rw.ID}, {w.Method, rw.Method}, {w.Params, rw.Params}, {w.Result, rw.Result}, {w.Error, rw.Error}} {
				if (f.a == nil) != (f.b == nil) || unsafe.SliceData(f.a) != unsafe.SliceData(f.b) || len(f.a) != len(f.b) || cap(f.a) != cap(f.b) {
					t.Fatalf("%q: member %d is %q (cap %d), by reflection %q (cap %d)", b, i, f.a, cap(f.a), f.b, cap(f.b))
				}
			}
		}
		if !reflect.DeepEqual(m, rm) || !reflect.DeepEqual(e, re) {
			t.Fatalf("%q: %+v %v, by reflection %+v %v", b, m, e, rm, re)
		}
	})
}

// BenchmarkDecodeOne: a small tools/call request and its answer, read by
// UnmarshalJSONFrom and, for comparison, by reflection.
func BenchmarkDecodeOne(b *testing.B) {
	for _, in := range []struct{ name, s string }{
		{"request", `{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`},
		{"result", `{"jsonrpc":"2.0","id":"abc","result":{"content":[{"type":"text","text":"hello"}]}}`},
	} {
		data := []byte(in.s)
		b.Run(in.name+"/method", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				decodeOne(data)
			}
		})
		b.Run(in.name+"/reflect", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				decodeReflect(data)
			}
		})
	}
}

// padded is b with a member long enough for decodeOne to scan it
// (mcpjson.ScanObject) put first in its object, if b is one.
func padded(b []byte) []byte {
	pad := `{"pad":"` + strings.Repeat("x", mcpjson.ScanMin) + `"`
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return append([]byte(pad+`}`), b...) // not an object: two values
	}
	rest := bytes.TrimLeft(t[1:], " \t\r\n")
	if len(rest) > 0 && rest[0] == '}' {
		return append([]byte(pad), rest...)
	}
	return append([]byte(pad+`,`), rest...)
}

// FuzzDecodeScannedMatchesReflection: a message long enough to be
// scanned is read as the decoder reads it, its members the same slices
// of it, its errors the same.
func FuzzDecodeScannedMatchesReflection(f *testing.F) {
	for _, s := range wireSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, padded(b)} {
			m, e := decodeOne(in)
			_, _, rm, re := decodeReflect(in)
			if !reflect.DeepEqual(m, rm) || !reflect.DeepEqual(e, re) {
				t.Fatalf("%.100q: %+v %v, by reflection %+v %v", in, m, e, rm, re)
			}
		}
	})
}

// TestDecodeScans: a message, short or long, is scanned (the seeds, as
// they are and padded: each valid one at least, whose names have no
// escapes), not decoded.
func TestDecodeScans(t *testing.T) {
	for _, pad := range []bool{false, true} {
		scanned := 0
		for _, s := range wireSeeds {
			b := []byte(s)
			if pad {
				b = padded(b)
			}
			var w wire
			if w.scan(b) {
				scanned++
			}
		}
		if scanned < 20 {
			t.Errorf("padded %v: %d of the %d seeds were scanned", pad, scanned, len(wireSeeds))
		}
	}
	short := []byte(`{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"hi"}]}}`)
	for _, b := range [][]byte{short, padded(short)} {
		var w wire
		if !w.scan(b) || string(w.ID) != `"a"` {
			t.Errorf("a result of %d bytes was not scanned: %+v", len(b), w)
		}
	}
}
