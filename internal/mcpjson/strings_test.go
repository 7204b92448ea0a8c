package mcpjson

import (
	"runtime"
	"strings"
	"testing"

	json "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

type longHolder struct {
	Text  string            `json:"text"`
	More  []string          `json:"more,omitempty"`
	Named label             `json:"named,omitempty"`
	Ptr   *string           `json:"ptr,omitempty"`
	Map   map[string]string `json:"map,omitempty"`
}

type label string

// TestLongStrings: a string decoded by longString is the one the decoder
// makes, and input it does not take (short, null, not a string, broken)
// decodes, or fails, as without it.
func TestLongStrings(t *testing.T) {
	long := strings.Repeat("x", longStringMin)
	quoted := func(s string) string { return `"` + s + `"` }
	esc := strings.Repeat(`line\n`, 400)
	cases := []string{
		`{"text":` + quoted(long) + `}`,
		`{"text":` + quoted(long+"y") + `}`,
		`{"text":` + quoted(long[:longStringMin-1]) + `}`,
		`{"text":` + quoted(esc) + `}`,
		`{"text" : ` + quoted(esc+`\u00e9\ud83d\ude00\"\\\/\b\f\r\t`) + ` }`,
		`{"text":` + quoted(`\"`+long) + `}`, // an escaped quote early
		`{"text":` + quoted(`{\"a\":\"\\\\\"`+esc) + `}`,
		`{"text":` + quoted(`a\\`) + `,"more":[` + quoted(long) + `]}`, // an escaped backslash, then the end
		`{"text":` + quoted(`\\\\`) + `,"named":` + quoted(esc) + `}`,
		`{"text":` + quoted(long+`\"`+esc) + `}`,
		`{"text":"short\n"}`,
		`{"text":null}`,
		`{"text":12}`,
		`{"text":` + quoted(long) + `,"text":"again"}`,
		`{"text":` + quoted(long+"\xff") + `}`,
		`{"text":` + quoted(long+`\ud800`) + `}`,
		`{"text":` + quoted(long+`\x`) + `}`,
		`{"text":` + quoted(long+"\n") + `}`,
		`{"text":` + quoted(long),
		`{"more":[` + quoted(esc) + `,` + quoted(long) + `,"a"],"named":` + quoted(esc) + `,"ptr":` + quoted(esc) + `,"map":{"k":` + quoted(esc) + `}}`,
	}
	for i, in := range cases {
		var got, want longHolder
		gerr := Unmarshal([]byte(in), &got)
		werr := json.Unmarshal([]byte(in), &want)
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Errorf("case %d: error %v, want %v", i, gerr, werr)
			continue
		}
		if got.Text != want.Text || strings.Join(got.More, "|") != strings.Join(want.More, "|") || got.Named != want.Named ||
			(got.Ptr == nil) != (want.Ptr == nil) || got.Ptr != nil && *got.Ptr != *want.Ptr || got.Map["k"] != want.Map["k"] {
			t.Errorf("case %d: decoded %.80q, want %.80q", i, got.Text, want.Text)
		}
		var shared longHolder
		if err := UnmarshalShared([]byte(in), &shared); (err == nil) != (werr == nil) || shared.Text != want.Text {
			t.Errorf("case %d, shared: %v, %.80q", i, err, shared.Text)
		}
		var top string
		if in[0] == '{' && strings.HasPrefix(in, `{"text":"`) && strings.HasSuffix(in, `"}`) {
			s := in[len(`{"text":`) : len(in)-1]
			var wtop string
			gerr, werr := Unmarshal([]byte(s), &top), json.Unmarshal([]byte(s), &wtop)
			if (gerr == nil) != (werr == nil) || top != wtop {
				t.Errorf("case %d, top level: %v %.80q, want %v %.80q", i, gerr, top, werr, wtop)
			}
		}
	}
}

// TestLongStringOneCopy: a 1 MB string of escaped lines costs one copy
// (the decoder's way unquoted it into a buffer and copied that again),
// and so does one that holds JSON, its quotes escaped.
func TestLongStringOneCopy(t *testing.T) {
	for _, in := range []string{
		`{"text":"` + strings.Repeat(strings.Repeat("x", 79)+`\n`, 1<<20/80) + `"}`,
		`{"text":"{\"text\":\"` + strings.Repeat("x", 1<<20) + `\"}"}`,
	} {
		oneCopy(t, []byte(in))
	}
}

func oneCopy(t *testing.T, in []byte) {
	var v longHolder
	if err := Unmarshal(in, &v); err != nil { // warm the decoder's pools
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if err := Unmarshal(in, &v); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if n, size := after.TotalAlloc-before.TotalAlloc, uint64(len(v.Text)); n > size+size/2 {
		t.Errorf("decoding a string of %d bytes allocated %d bytes, want one copy", size, n)
	}
}

// TestUnquoteValid: the string is jsontext.AppendUnquote's for every
// escape but half a surrogate pair alone, which is left to it.
func TestUnquoteValid(t *testing.T) {
	for _, body := range []string{
		``, `plain`, `{\"text\":\"x\"}`, `a\\b\/c\bd\fe\nf\rg\th`, `\\\\\"`, `é 😀 \n`, strings.Repeat(`line\n`, 300),
		`\u00e9`, `a\ud83d\ude00b`, `\u0000\u001F\u003c\u2028\uFFFF`, `\uD83D\uDE00\u00E9`,
	} {
		want, err := jsontext.AppendUnquote(nil, `"`+body+`"`)
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		sb.WriteString("pre")
		ok := unquoteValid(&sb, []byte(body))
		if got := sb.String(); !ok || got != "pre"+string(want) {
			t.Errorf("%q: %q, %v; want %q", body, sb.String(), ok, want)
		}
	}
	for _, body := range []string{`\ud800`, `\udc00x`, `\ud83d\u0041`, `\u12`, `\u12g4`, `x\`} {
		if unquoteValid(new(strings.Builder), []byte(body)) {
			t.Errorf("%q: ok, want it left to AppendUnquote", body)
		}
	}
}

// BenchmarkLongString decodes a 64 kB text holding JSON (its quotes
// escaped), as the echo's result carries it.
func BenchmarkLongString(b *testing.B) {
	in := []byte(`{"text":"{\"text\":\"` + strings.Repeat("x", 64<<10) + `\"}"}`)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for range b.N {
		var h longHolder
		if err := Unmarshal(in, &h); err != nil {
			b.Fatal(err)
		}
	}
}
