package mcpjson_test

import (
	"encoding/json"
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
