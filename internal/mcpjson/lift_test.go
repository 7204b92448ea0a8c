package mcpjson_test

import (
	stdjson "encoding/json"
	"reflect"
	"strings"
	"testing"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	v20251125 "github.com/mcpx-dev/mcpx/generated/wire/v20251125"
	v20260728 "github.com/mcpx-dev/mcpx/generated/wire/v20260728"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// liftHolder has every kind of target a lifted string can land in: a
// string, a json.RawMessage, an any, a named string type, a map.
type liftHolder struct {
	Text  string             `json:"text"`
	More  []string           `json:"more,omitempty"`
	Raw   stdjson.RawMessage `json:"raw,omitempty"`
	Any   any                `json:"any,omitempty"`
	Named liftLabel          `json:"named,omitempty"`
	Map   map[string]string  `json:"map,omitempty"`
}

type liftLabel string

var (
	liftLong = strings.Repeat("x", 1100)
	liftEsc  = strings.Repeat(`line \"one\"\n`, 100) + `\u00e9\ud83d\ude00\/\b\f\r\t\\`
)

func liftQuoted(s string) string { return `"` + s + `"` }

// liftTaken are inputs whose every long string a lifted decode takes.
var liftTaken = []string{
	`{"text":` + liftQuoted(liftLong) + `}`,
	`{"text" : ` + liftQuoted(liftEsc) + ` , "more":[` + liftQuoted(liftLong) + `,"a",` + liftQuoted(liftEsc) + `]}`,
	`{"raw":{"a":[` + liftQuoted(liftLong) + `,` + liftQuoted(liftEsc) + `],"b":1},"text":` + liftQuoted(liftEsc) + `}`,
	`{"raw":` + liftQuoted(liftLong) + `,"map":{"k":` + liftQuoted(liftEsc) + `}}`,
	`{"map":{` + liftQuoted(liftLong) + `:` + liftQuoted(liftLong) + `},"text":"short"}`, // a long name stays
	// The decoder gives an any's string to the string unmarshalers too.
	`{"any":` + liftQuoted(liftLong) + `}`,
	`{"text":` + liftQuoted(liftLong) + `,"any":[1,{"a":` + liftQuoted(liftEsc) + `}]}`,
}

// liftLeft are inputs a lifted decode leaves to the decoder: a long
// string read by what is not a string or raw value, or invalid input.
var liftLeft = []string{
	`{"named":` + liftQuoted(liftEsc) + `}`,
	`{"text":` + liftQuoted(liftLong) + `,"text":"again"}`,
	`{"text":` + liftQuoted(liftLong) + `,}`,
	`{"text":` + liftQuoted(liftLong) + `} x`,
	`{"text":12,"more":[` + liftQuoted(liftLong) + `]}`,
	`{"text":` + liftQuoted(liftLong+"\xff") + `}`,
	`{"text":` + liftQuoted(liftLong+`\ud800`) + `}`,
	`{"text":` + liftQuoted(liftLong+"\x01") + `}`,
	`{"text":` + liftQuoted(liftLong+`\x`) + `}`,
	`{"text":` + liftQuoted(liftLong),
	`[` + liftQuoted(liftLong) + `]`,
}

// checkLifted decodes in into a new value of each target type, lifted
// and as it is, and fails unless both give the same value and error.
// It reports whether the lifted decode took every target.
func checkLifted(t *testing.T, in string) (allTaken bool) {
	t.Helper()
	allTaken = true
	for _, typ := range []reflect.Type{
		reflect.TypeFor[liftHolder](),
		reflect.TypeFor[v20260728.CallToolResult](),
		reflect.TypeFor[v20251125.ReadResourceResult](),
	} {
		got, want := reflect.New(typ), reflect.New(typ)
		gerr := mcpjson.UnmarshalShared([]byte(in), got.Interface())
		werr := mcpjson.UnmarshalSharedAsIs([]byte(in), want.Interface())
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Errorf("%v of %.80q: error %v, want %v", typ, in, gerr, werr)
			continue
		}
		if !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Errorf("%v of %.80q: %+.200v, want %+.200v", typ, in, got.Elem(), want.Elem())
		}
		lifted := reflect.New(typ)
		done, err := mcpjson.UnmarshalLifted([]byte(in), lifted.Interface())
		if done && (err != nil || !reflect.DeepEqual(lifted.Interface(), want.Interface())) {
			t.Errorf("%v of %.80q: lifted %+.200v, %v", typ, in, lifted.Elem(), err)
		}
		if !done && !reflect.ValueOf(lifted.Elem().Interface()).IsZero() {
			t.Errorf("%v of %.80q: left to the decoder, but set", typ, in)
		}
		allTaken = allTaken && done
	}
	return allTaken
}

// redecoded decodes a value it read once more, with a decoder of its own
// and its decoder's options: offsets there are not the copy's.
type redecoded struct {
	In struct {
		S string `json:"s"`
	}
}

func (r *redecoded) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	return json.Unmarshal(v, &r.In, dec.Options())
}

// TestLiftedRedecoded: a string lifted from the copy is not given to a
// decoder of a value read again (found in review: it was given the
// string lifted from the same offset of the copy).
func TestLiftedRedecoded(t *testing.T) {
	in := `{"a":"` + strings.Repeat("1", 1100) + `","w":{"s":"` + strings.Repeat("2", 3000) + `"}}`
	type holder struct {
		A string    `json:"a"`
		W redecoded `json:"w"`
	}
	var got, want holder
	gerr, werr := mcpjson.UnmarshalShared([]byte(in), &got), mcpjson.UnmarshalSharedAsIs([]byte(in), &want)
	if gerr != nil || werr != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %.40v (%v), want %.40v (%v)", got, gerr, want, werr)
	}
}

// TestLiftedIsDecoder: what a lifted decode gives is the decoder's, and
// it takes the long strings of what mcpx reads most.
func TestLiftedIsDecoder(t *testing.T) {
	for _, in := range liftTaken {
		var h liftHolder
		if done, err := mcpjson.UnmarshalLifted([]byte(in), &h); !done || err != nil {
			t.Errorf("%.80q: not lifted (%v)", in, err)
		}
		checkLifted(t, in)
	}
	for _, in := range liftLeft {
		var h liftHolder
		if done, _ := mcpjson.UnmarshalLifted([]byte(in), &h); done {
			t.Errorf("%.80q: lifted", in)
		}
		checkLifted(t, in)
	}
	// What an upstream answers: a text block, structured content, _meta.
	results := []string{
		`{"content":[{"type":"text","text":` + liftQuoted(liftEsc) + `}],"resultType":"complete"}`,
		`{"_meta":{"k":` + liftQuoted(liftLong) + `},"content":[{"type":"text","text":"hi"},{"type":"text","text":` + liftQuoted(liftLong) + `,"annotations":{"audience":["user"]}}],"structuredContent":{"x":` + liftQuoted(liftEsc) + `},"isError":false,"resultType":"complete"}`,
		`{"contents":[{"uri":"file:///a","text":` + liftQuoted(liftEsc) + `},{"uri":"file:///b","blob":` + liftQuoted(strings.Repeat("QUJD", 300)) + `}]}`,
	}
	for _, in := range results {
		checkLifted(t, in)
	}
	var r v20260728.CallToolResult
	if done, err := mcpjson.UnmarshalLifted([]byte(results[1]), &r); !done || err != nil {
		t.Errorf("a tool's result: not lifted (%v)", err)
	}
	// Into a value already set, the decoder merges: that is its own to do.
	in := `{"named":` + liftQuoted(liftEsc) + `,"more":[` + liftQuoted(liftLong) + `]}`
	got, want := liftHolder{Text: "kept"}, liftHolder{Text: "kept"}
	if done, _ := mcpjson.UnmarshalLifted([]byte(in), &got); done {
		t.Error("a value already set: lifted")
	}
	gerr, werr := mcpjson.UnmarshalShared([]byte(in), &got), mcpjson.UnmarshalSharedAsIs([]byte(in), &want)
	if gerr != nil || werr != nil || !reflect.DeepEqual(got, want) || got.Text != "kept" {
		t.Errorf("a value already set: %+.80v (%v), want %+.80v (%v)", got, gerr, want, werr)
	}
}

// FuzzLiftedIsDecoder: for any input, the lifted decode and the decoder
// give the same value and error. Each input also goes in a long string
// and beside one, as the long results lifting is for.
func FuzzLiftedIsDecoder(f *testing.F) {
	for _, s := range append(liftTaken, liftLeft...) {
		s = strings.ReplaceAll(s, liftLong, "x")
		f.Add(strings.ReplaceAll(s, liftEsc, `a\"b\n\u00e9\ud83d\ude00`))
	}
	f.Add(`{"type":"text","text":"a"}`)
	f.Add(`"\u00e9\n"`)
	pad := strings.Repeat("y", 1024)
	f.Fuzz(func(t *testing.T, s string) {
		checkLifted(t, s)
		checkLifted(t, `{"text":"`+pad+s+`"}`)
		checkLifted(t, `{"more":["`+pad+`",`+s+`]}`)
		checkLifted(t, `{"content":[{"type":"text","text":"`+pad+s+`"}],"structuredContent":`+s+`}`)
		checkLifted(t, `{"raw":[`+s+`,"`+pad+`"],"text":"`+pad+`"}`)
	})
}

// BenchmarkUnmarshalShared decodes the echo's 64 kB result (a text of
// JSON, its quotes escaped) as an upstream's answer is decoded: lifted,
// and as it is.
func BenchmarkUnmarshalShared(b *testing.B) {
	in := []byte(`{"content":[{"type":"text","text":"{\"text\":\"` + strings.Repeat("x", 64<<10) + `\"}"}],"resultType":"complete"}`)
	for _, c := range []struct {
		name string
		fn   func([]byte, any) error
	}{{"lifted", mcpjson.UnmarshalShared}, {"as-is", mcpjson.UnmarshalSharedAsIs}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for range b.N {
				var r v20260728.CallToolResult
				if err := c.fn(in, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
