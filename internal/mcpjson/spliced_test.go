package mcpjson_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

// splicedTexts are long strings MarshalSpliced may copy in as they are
// and ones it must leave to the encoder: each character encoding/json
// escapes, at the start, the end and across an 8-byte word, non-ASCII,
// invalid UTF-8, DEL.
func splicedTexts() map[string]string {
	long := strings.Repeat("abcdefg ", 200) // 1,600 bytes, plain
	texts := map[string]string{
		"plain":         long,
		"plain odd":     long + "xyz",
		"non-ASCII":     long + "é ✓ 😀 中",
		"DEL":           long + "\x7f",
		"slash":         long + "a/b",
		"invalid UTF-8": long + "\xff\xfe",
		"cut rune":      long + "\xe2\x80",
		"short":         "a<b",
		"JSON":          strings.Repeat(`{"text":"a\\nb","n":[1,2]}`+"\n\t\r", 100),
		"JSON <>":       strings.Repeat(`{"html":"<a href='x'>&amp;</a>"}`, 100),
		"exactly min":   strings.Repeat("y", 1024),
		"min-1 with <":  strings.Repeat("y", 1023) + "<",
	}
	chars := []string{"\u2028", "\u2029", "\ufffd", "é", "<>&", "\"\"", "\n\n", "\\\\"}
	for c := range 0x80 {
		chars = append(chars, string(rune(c)))
	}
	for _, c := range chars {
		for _, at := range []int{0, 7, 8, 9, len(long) - 1, len(long)} {
			texts[fmt.Sprintf("%q at %d", c, at)] = long[:at] + c + long[at:]
		}
	}
	return texts
}

// TestMarshalSplicedIsEncodingJSON: MarshalSpliced writes what
// MarshalPooled writes, and encoding/json where mcpjson.Marshal does
// (all but invalid UTF-8), for long texts in a tool's result (the hub
// value and every revision's), several in one value, in maps and as
// member names.
func TestMarshalSplicedIsEncodingJSON(t *testing.T) {
	for name, text := range splicedTexts() {
		res := &mcp.CallToolResult{Content: []mcp.ContentBlock{
			{Value: &mcp.TextContent{Text: text}},
			{Value: &mcp.TextContent{Text: "short <"}},
			{Value: &mcp.TextContent{Text: strings.ToUpper(text)}},
		}, Meta: mcp.Meta{"k": json.RawMessage(`"v"`)}}
		values := map[string]any{
			"hub":  res,
			"map":  map[string]any{"a": text, text: "key", "z": []string{text, "b", text}},
			"bare": text,
			// omitempty and omitzero: the encoder must not take the "" written
			// for the text as an empty value.
			"omit": struct {
				A string `json:"a,omitempty"`
				B string `json:"b,omitzero"`
				C string `json:"c,omitempty"`
				D string `json:"d,string"`
			}{text, text, "", text},
		}
		for _, rev := range mcp.Revisions {
			w, err := convert.Downgrade(rev, res)
			if err != nil {
				t.Fatal(err)
			}
			values[string(rev)] = w
		}
		for what, v := range values {
			want, err := mcpjson.MarshalPooled(v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := mcpjson.MarshalSpliced(v)
			if err != nil {
				t.Fatalf("%s, %s: %v", name, what, err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("%s, %s: MarshalSpliced\n%.300q\nMarshalPooled\n%.300q", name, what, got.Bytes(), want.Bytes())
			}
			if !strings.Contains(name, "invalid") && !strings.Contains(name, "cut rune") {
				std, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), std) {
					t.Errorf("%s, %s: MarshalSpliced\n%.300q\nencoding/json\n%.300q", name, what, got.Bytes(), std)
				}
			}
			got.Free()
			want.Free()
		}
	}
}

// TestMarshalSplicedErrors: a value the encoder refuses is refused alike.
func TestMarshalSplicedErrors(t *testing.T) {
	v := map[string]any{"a": strings.Repeat("x", 2048), "f": func() {}}
	_, want := mcpjson.MarshalPooled(v)
	_, got := mcpjson.MarshalSpliced(v)
	if want == nil || got == nil || got.Error() != want.Error() {
		t.Fatalf("MarshalSpliced: %v, MarshalPooled: %v", got, want)
	}
}

func FuzzMarshalSpliced(f *testing.F) {
	for _, s := range splicedTexts() {
		f.Add(s[max(0, len(s)-40):])
	}
	f.Fuzz(func(t *testing.T, tail string) {
		v := []string{strings.Repeat("p", 1030) + tail, tail, tail + strings.Repeat(tail+"\n", 1100/max(1, len(tail)))}
		want, _ := mcpjson.MarshalPooled(v)
		got, err := mcpjson.MarshalSpliced(v)
		if err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%q: %v", tail, err)
		}
	})
}
