package schemas

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestPointer(t *testing.T) {
	for _, c := range []struct {
		tokens []string
		want   string
	}{
		{nil, ""},
		{[]string{"a"}, "/a"},
		{[]string{"a", "b/c", "m~n", ""}, "/a/b~1c/m~0n/"},
	} {
		if got := Pointer(c.tokens...); got != c.want {
			t.Errorf("Pointer(%q) = %q, want %q", c.tokens, got, c.want)
		}
	}
}

func TestFailures(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(`{"type":"object","properties":{"a/b":{"type":"string"},"n":{"minimum":1}},"required":["r"]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCompiler()
	if err := c.AddResource("mem://s.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://s.json")
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"a/b":1,"n":0}`))
	var ve *jsonschema.ValidationError
	if !errors.As(s.Validate(inst), &ve) {
		t.Fatal("the instance validated")
	}
	var where []string
	for _, f := range Failures(ve) {
		if f.Problem == "" {
			t.Errorf("failure at %q has no problem", f.Pointer)
		}
		where = append(where, f.Pointer)
	}
	// The order of the causes is jsonschema's; the set is what matters.
	want := map[string]bool{"": true, "/a~1b": true, "/n": true}
	got := map[string]bool{}
	for _, w := range where {
		got[w] = true
	}
	if !reflect.DeepEqual(got, want) || len(where) != 3 {
		t.Errorf("failures at %q, want one each at %v", where, want)
	}
}
