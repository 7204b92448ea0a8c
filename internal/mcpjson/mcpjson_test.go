package mcpjson_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/mcpjson"
)

type params struct {
	Name string          `json:"name"`
	Meta json.RawMessage `json:"_meta"`
}

// TestExactNames: a member whose name differs in case is not the member
// (encoding/json would set Name from "NAME").
func TestExactNames(t *testing.T) {
	var p params
	if err := mcpjson.Unmarshal([]byte(`{"NAME":"smuggled","_Meta":{}}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.Name != "" || p.Meta != nil {
		t.Errorf("a differently cased member was taken: %+v", p)
	}
}

// TestRefused: what RFC 8259 does not allow in a message is an error, and
// IsSyntax tells not-JSON from JSON of the wrong shape.
func TestRefused(t *testing.T) {
	for _, c := range []struct {
		in     string
		syntax bool
	}{
		{`{"name":"a","name":"b"}`, true}, // duplicate member names
		{"{\"name\":\"\xff\"}", true},     // invalid UTF-8
		{`{"name":"a"} {}`, true},         // more than one value
		{`{"name":`, true},
		{`{"name":7}`, false}, // JSON, but not a string
	} {
		var p params
		err := mcpjson.Unmarshal([]byte(c.in), &p)
		if err == nil {
			t.Errorf("%q: decoded, want an error", c.in)
			continue
		}
		if mcpjson.IsSyntax(err) != c.syntax {
			t.Errorf("%q: IsSyntax(%v) = %v, want %v", c.in, err, !c.syntax, c.syntax)
		}
		if mcpjson.Valid([]byte(c.in)) == c.syntax {
			t.Errorf("%q: Valid = %v", c.in, !c.syntax)
		}
	}
}

// TestLikeEncodingJSON: on ordinary input the result is what encoding/json
// gives, json.RawMessage members and UnmarshalJSON methods included.
func TestLikeEncodingJSON(t *testing.T) {
	in := []byte(`{"name":"echo","_meta":{"k": [1, 2.5, "x", null]},"other":true}`)
	var got, want params
	if err := mcpjson.Unmarshal(in, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(in, &want); err != nil {
		t.Fatal(err)
	}
	if got.Name != want.Name || string(got.Meta) != string(want.Meta) {
		t.Errorf("got %+v (%s), encoding/json %+v (%s)", got, got.Meta, want, want.Meta)
	}
}

// TestTooDeep: JSON nested beyond MaxDepth is refused as too deep, which
// IsTooDeep tells from malformed JSON; Check says why data is refused.
func TestTooDeep(t *testing.T) {
	deep := []byte(strings.Repeat("[", mcpjson.MaxDepth+1) + strings.Repeat("]", mcpjson.MaxDepth+1))
	err := mcpjson.Check(deep)
	if err == nil || !mcpjson.IsSyntax(err) || !mcpjson.IsTooDeep(err) {
		t.Errorf("%d levels: %v", mcpjson.MaxDepth+1, err)
	}
	var v any
	if err := mcpjson.Unmarshal(deep, &v); !mcpjson.IsTooDeep(err) {
		t.Errorf("Unmarshal of %d levels: %v", mcpjson.MaxDepth+1, err)
	}
	ok := []byte(strings.Repeat("[", mcpjson.MaxDepth) + strings.Repeat("]", mcpjson.MaxDepth))
	if err := mcpjson.Check(ok); err != nil {
		t.Errorf("%d levels: %v", mcpjson.MaxDepth, err)
	}
	if err := mcpjson.Check([]byte(`[1,`)); err == nil || mcpjson.IsTooDeep(err) {
		t.Errorf("malformed JSON: %v", err)
	}
}

// TestDescribe: a value of the wrong type is described in JSON terms,
// without Go type names.
func TestDescribe(t *testing.T) {
	var p struct {
		Name string                     `json:"name"`
		Meta map[string]json.RawMessage `json:"_meta"`
		N    int                        `json:"n"`
		List []string                   `json:"list"`
	}
	for in, want := range map[string]string{
		`{"name":5}`:         "at /name: expected a string, not a number",
		`{"_meta":"x"}`:      "at /_meta: expected an object, not a string",
		`{"n":{}}`:           "at /n: expected a number, not an object",
		`{"list":[true]}`:    "at /list/0: expected a string, not a boolean",
		`{"list":{"a":"b"}}`: "at /list: expected an array, not an object",
	} {
		err := mcpjson.Unmarshal([]byte(in), &p)
		if err == nil {
			t.Errorf("%s: no error", in)
			continue
		}
		if got := mcpjson.Describe(err); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}
