package mcpjson_test

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/mcpx-dev/mcpx/generated/convert"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/generated/revision"
	v20251125 "github.com/mcpx-dev/mcpx/generated/wire/v20251125"
	v20260728 "github.com/mcpx-dev/mcpx/generated/wire/v20260728"
	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

func TestMember(t *testing.T) {
	for _, c := range []struct {
		in, val string
		ok      bool
	}{
		{`{"type":"text","text":"a"}`, `"text"`, true},
		{`, {"text":"a \"type\": \\","type" : "image" }`, `"image"`, true},
		{`:{"a":{"type":"x","b":[1,{"type":2}]},"type":"t\"","c":-1.5e3}, more`, `"t\""`, true},
		{`{"a":[],"b":{},"c":null,"d":true,"e":0}`, ``, true},
		{`{}`, ``, true},
		{` [1]`, ``, false},
		{`"type"`, ``, false},
		{`{"type":"a","type":"b"}`, ``, false},         // twice
		{`{"typ\u0065":"a"}`, ``, false},               // a name with an escape may be it
		{`{"type":"text","text":"unended}`, ``, false}, // not all in the buffer
		{`{"type":"text","n":12`, ``, false},
		{`{"type":"text","o":{"a":[}`, ``, false},
		{`{"a\\":"\\\\","type":"x"}`, ``, false},
		{`{"a":"\\\\","type":"x"}`, `"x"`, true},
	} {
		val, ok := mcpjson.Member([]byte(c.in), "type")
		if ok != c.ok || string(val) != c.val {
			t.Errorf("Member(%s) = %s, %v; want %s, %v", c.in, val, ok, c.val, c.ok)
		}
	}
}

// unionCases are content blocks and other unions as an upstream may
// spell them: the discriminator first, last, absent, escaped, unknown,
// twice, with members of the wrong type.
var unionCases = []string{
	`{"type":"text","text":"a"}`,
	`{"text":"a \"type\":\"image\"","type":"text","_meta":{"k":[1, 2]}}`,
	`{"type":"image","data":"aGk=","mimeType":"image/png"}`,
	`{"type":"resource","resource":{"uri":"file:///b","text":"b"}}`,
	`{"type":"resource","resource":{"uri":"file:///c","blob":"aGk=","mimeType":"x/y"}}`,
	`{"type":"resource_link","uri":"file:///a","name":"a","size":3}`,
	`{"type":"t\u0065xt","text":"a"}`,
	`{"typ\u0065":"text","text":"a"}`,
	`{"type":"video","text":"a"}`,
	`{"text":"a"}`,
	`{"type":"text","text":5}`,
	`{"type":"text","type":"text","text":"a"}`,
	`{"type":"text","text":"a","text":"b"}`,
	`{"type":"text","text":"a","extra":1}`,
	`{"type":"text","Text":"a"}`,
	`{"type":"image","text":"a"}`,
	`{"type":"text","text":"a"`,
	`["a"]`,
	`null`,
	`5`,
}

// TestUnionOnePass checks that UnmarshalJSONFrom (the one pass, what
// Unmarshal calls) decodes every union value as UnmarshalJSON (the
// probe and a second decode) did: the same value, an error where it
// had one.
func TestUnionOnePass(t *testing.T) {
	type union interface{ UnmarshalJSON([]byte) error }
	kinds := map[string]func() union{
		"v20260728.ContentBlock":                func() union { return new(v20260728.ContentBlock) },
		"v20251125.ContentBlock":                func() union { return new(v20251125.ContentBlock) },
		"v20251125.SamplingMessageContentBlock": func() union { return new(v20251125.SamplingMessageContentBlock) },
		"v20260728.EmbeddedResourceResource":    func() union { return new(v20260728.EmbeddedResourceResource) },
		"mcp.ContentBlock":                      func() union { return new(mcp.ContentBlock) },
		"v20260728.ElicitRequestParams":         func() union { return new(v20260728.ElicitRequestParams) },
		"v20260728.CompleteRequestParamsRef":    func() union { return new(v20260728.CompleteRequestParamsRef) },
	}
	extra := []string{
		`{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{}}}`,
		`{"message":"m","requestedSchema":{"type":"object","properties":{}}}`,
		`{"mode":"url","message":"m","url":"https://x","elicitationId":"e"}`,
		`{"type":"ref/prompt","name":"p"}`,
		`{"uri":"file:///b","text":"b"}`,
	}
	for name, mk := range kinds {
		for _, in := range append(unionCases, extra...) {
			old, one := mk(), mk()
			errOld := old.UnmarshalJSON([]byte(in))
			errOne := mcpjson.Unmarshal([]byte(in), one)
			if (errOld == nil) != (errOne == nil) {
				t.Errorf("%s %s: UnmarshalJSON: %v; one pass: %v", name, in, errOld, errOne)
				continue
			}
			if errOld == nil && !reflect.DeepEqual(old, one) {
				t.Errorf("%s %s: UnmarshalJSON %#v; one pass %#v", name, in, old, one)
			}
		}
	}
}

// TestUnionDecodedInOnePass fails without UnmarshalJSONFrom: a content
// block's raw members are then decoded by the union's own Unmarshal, a
// copy, not a slice of the input UnmarshalShared was given.
func TestUnionDecodedInOnePass(t *testing.T) {
	in := []byte(`{"content":[{"text":"` + strings.Repeat("x", 2000) + `","type":"text","_meta":{"k":[1,2]}}]}`)
	var r v20260728.CallToolResult
	if err := mcpjson.UnmarshalShared(in, &r); err != nil {
		t.Fatal(err)
	}
	k := r.Content[0].Value.(*v20260728.TextContent).Meta["k"]
	if p := uintptr(unsafe.Pointer(unsafe.SliceData(k))); p < uintptr(unsafe.Pointer(&in[0])) || p >= uintptr(unsafe.Pointer(&in[0]))+uintptr(len(in)) {
		t.Errorf("the block's _meta value %s is a copy: the block was decoded again by UnmarshalJSON", k)
	}
}

// TestUnionOnePassErrors: a variant decoded in the caller's pass reports
// where in the whole value it is wrong, and a syntax error stays one.
func TestUnionOnePassErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{"content":[{"type":"text","text":5}]}`:              "at /content/0/text: expected a string, not a number",
		`{"content":[{"text":5,"type":"text"}]}`:              "at /content/0/text: expected a string, not a number",
		`{"content":[{"type":"text","text":"a","text":"b"}]}`: `jsontext: duplicate object member name "text" within "/content/0"`,
	} {
		var r v20260728.CallToolResult
		err := mcpjson.UnmarshalShared([]byte(in), &r)
		if err == nil {
			t.Errorf("%s: no error; want %s", in, want)
		} else if got := mcpjson.Describe(err); got != want {
			t.Errorf("%s: %s; want %s", in, got, want)
		}
	}
}

// TestEveryUnionOnePass runs TestUnionOnePass's comparison over every
// union of every revision and of the hub: each variant's tag as the
// discriminator first and last, beside members of several variants'.
func TestEveryUnionOnePass(t *testing.T) {
	type union interface {
		UnmarshalJSON([]byte) error
		UnmarshalJSONFrom(*mcpjson.Decoder) error
	}
	const members = `"text":"a \"b\"","data":"aGk=","mimeType":"x/y","uri":"file:///a","name":"n","message":"m",` +
		`"requestedSchema":{"type":"object","properties":{}},"url":"https://x","elicitationId":"e","resource":{"uri":"file:///b","text":"b"},` +
		`"id":"i","input":{},"toolUseId":"u","content":[{"type":"text","text":"c"}],"_meta":{"k":[1]}`
	n := 0
	for _, tab := range revision.Tables {
		for _, ty := range tab.Types {
			mk := func() any { return convert.New(tab.Revision, ty.Name) }
			for _, hub := range []bool{false, true} {
				if hub {
					mk = func() any { return mcp.New(ty.Name) }
				}
				if _, ok := mk().(union); !ok {
					continue
				}
				n++
				ins := append([]string{}, unionCases...)
				for _, tag := range ty.Variants {
					for _, disc := range []string{"type", "mode"} {
						ins = append(ins, `{"`+disc+`":"`+tag+`",`+members+`}`, `{`+members+`,"`+disc+`":"`+tag+`"}`)
					}
				}
				for _, in := range ins {
					old, one := mk().(union), mk().(union)
					errOld := old.UnmarshalJSON([]byte(in))
					errOne := mcpjson.Unmarshal([]byte(in), one)
					if (errOld == nil) != (errOne == nil) {
						t.Errorf("%s %s (hub %v) %s: UnmarshalJSON: %v; one pass: %v", tab.Revision, ty.Name, hub, in, errOld, errOne)
					} else if errOld == nil && !reflect.DeepEqual(old, one) {
						t.Errorf("%s %s (hub %v) %s: UnmarshalJSON %#v; one pass %#v", tab.Revision, ty.Name, hub, in, old, one)
					}
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("%d unions checked: the tables name fewer than expected", n)
	}
	t.Logf("%d unions", n)
}
