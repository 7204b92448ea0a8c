package mcpjson_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// decoderMembers is what the decoder reads of the object data holds: each
// member's unquoted name and raw value; ok false if it refuses data.
func decoderMembers(data []byte) (names, vals []string, ok bool) {
	if mcpjson.Check(data) != nil {
		return nil, nil, false
	}
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil, false
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, nil, false
		}
		n := name.String() // before the next read voids it
		v, err := dec.ReadValue()
		if err != nil {
			return nil, nil, false
		}
		names, vals = append(names, n), append(vals, string(v))
	}
	return names, vals, true
}

// scanned is what ScanObject reports of data.
func scanned(data []byte) (names, vals []string, ok bool) {
	ok = mcpjson.ScanObject(data, func(name, val []byte) {
		names, vals = append(names, string(name)), append(vals, string(val))
	})
	return names, vals, ok
}

// checkScan: when ScanObject is sure of data, the decoder reads it
// without error, with the same members; when not, fn was not called.
func checkScan(t *testing.T, data []byte) bool {
	t.Helper()
	names, vals, ok := scanned(data)
	if !ok {
		if names != nil {
			t.Errorf("ScanObject(%.80q) was not sure, but reported members", data)
		}
		return false
	}
	wantNames, wantVals, valid := decoderMembers(data)
	if !valid {
		t.Errorf("ScanObject(%.80q) is sure of what the decoder refuses: %v", data, mcpjson.Check(data))
		return true
	}
	if strings.Join(names, "\x00") != strings.Join(wantNames, "\x00") || strings.Join(vals, "\x00") != strings.Join(wantVals, "\x00") {
		t.Errorf("ScanObject(%.80q) = %q %q, the decoder read %q %q", data, names, vals, wantNames, wantVals)
	}
	return true
}

var long = strings.Repeat("x", 64<<10)

// scanSure are valid objects ScanObject must be sure of: the fast way is
// taken for what mcpx reads most.
var scanSure = []string{
	`{}`, ` { } `, "\t{\n}\r\n",
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + long + `"}}}`,
	`{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"{\"text\":\"` + long + `\"}"}]}}`,
	`{"a":"é ü 日本 😀 \u00e9 \u20ac \n\t\"\\\/\b\f\r","b":[1,-0,0.5,1e5,-1.25E-3,true,false,null,[],{},[[{}]]]}`,
	`{ "a" : 1 , "b" : [ 1 , 2 ] , "c" : { "d" : "e" } }`,
	`{"a":{"x":1},"b":{"x":1},"c":[{"x":1},{"x":2}]}`, // the same names in different objects
	`{"abcdefgh1":1,"abcdefgh2":2,"abcdefgh":3,"abcdefg":4,"":5}`,
	`{"text":"` + strings.Repeat(`line\n`, 4000) + `"}`,
	"{\"a\":\"\x7f\"}",
	`{"a":"\ud83d\ude00 \uD83D\uDE00"}`,
}

// scanRefused are what the decoder refuses (or ScanObject leaves to it).
var scanRefused = []string{
	``, ` `, `[]`, `"x"`, `1`, `null`, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`, `{"a":1 "b":2}`,
	`{"a":1}x`, `{"a":1}{}`, `{"a":1}]`, `{a:1}`, `{'a':1}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":[1 2]}`,
	`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":1e}`, `{"a":1e+}`, `{"a":+1}`, `{"a":0x1}`,
	`{"a":tru}`, `{"a":truex}`, `{"a":nul}`, `{"a":True}`, `{"a":NaN}`,
	`{"a":1,"a":2}`, `{"x":{"a":1,"b":2,"a":3}}`, `{"abcdefghij":1,"abcdefghij":2}`, `{"":1,"":2}`,
	`{"a\u0062":1,"ab":2}`, `{"\u0061":1}`, // an escaped name: left to the decoder
	"{\"a\":\"\x00\"}", "{\"a\":\"\x1f\"}", "{\"a\":\"\n\"}", "{\"a\":\"\t\"}", "{\"a\":\"\xff\"}", "{\"a\":\"\xc3\"}",
	"{\"a\":\"\xed\xa0\x80\"}", // a surrogate in UTF-8
	`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12G4"}`, `{"a":"\`, `{"a":"abc`, `{"a":"\"}`,
	`{"a":"\ud800"}`, `{"a":"\udc00"}`, `{"a":"\ud83d"}`, `{"a":"\ud83d\u0041"}`, `{"a":"\ude00\ud83d"}`, // half a pair: left to the decoder
	"\ufeff{}", "{\"a\":1}\x00",
	`{"a":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`, // deeper than it follows
	`{"a":` + strings.Repeat("[", 300) + `}`,
}

// TestScanObject: sure of what mcpx reads most, never of what the
// decoder refuses, and the decoder's members when sure.
func TestScanObject(t *testing.T) {
	for _, s := range scanSure {
		if !checkScan(t, []byte(s)) {
			t.Errorf("ScanObject(%.80q) is not sure; the decoder says %v", s, mcpjson.Check([]byte(s)))
		}
	}
	for _, s := range scanRefused {
		if checkScan(t, []byte(s)) {
			t.Errorf("ScanObject(%.80q) is sure", s)
		}
	}
	// An object of many members: the names are compared past the first 8
	// bytes, and one of 257 is the decoder's.
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 256 {
		if i > 0 {
			b.WriteString(`,`)
		}
		b.WriteString(`"member-` + strings.Repeat("0", 3-len(itoa(i))) + itoa(i) + `":1`)
	}
	if !checkScan(t, []byte(b.String()+`}`)) {
		t.Error("256 members: not sure")
	}
	if checkScan(t, []byte(b.String()+`,"member-000":2}`)) {
		t.Error("a name twice, after 256 others: sure")
	}
	if checkScan(t, []byte(b.String()+`,"member-256":2}`)) {
		t.Error("257 members: sure")
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// FuzzScanObject: never sure of what the decoder refuses; the decoder's
// members when sure. Each input is also tried inside a long object, as
// the messages ScanObject is given are.
func FuzzScanObject(f *testing.F) {
	for _, s := range append(scanSure, scanRefused...) {
		if len(s) < 1<<10 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkScan(t, []byte(s))
		checkScan(t, []byte(`{"pad":"`+strings.Repeat("x", 100)+`","v":`+s+`}`))
		checkScan(t, []byte(`{"v":"`+s+`"}`))
	})
}

// BenchmarkScanObject: a 64 kB tools/call, by ScanObject and by the
// decoder (mcpjson.Check, what jsonrpc.Decode's envelope cost).
func BenchmarkScanObject(b *testing.B) {
	data := []byte(scanSure[3])
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			mcpjson.ScanObject(data, func(name, val []byte) {})
		}
	})
	b.Run("decoder", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			mcpjson.Check(data)
		}
	})
}
