package server

import (
	"encoding/json"
	"testing"
)

func TestExtension(t *testing.T) {
	for _, c := range []struct {
		ext  string
		want bool
	}{
		{``, false},
		{`{}`, false},
		{`{"other/x":{}}`, false},
		{`{"io.modelcontextprotocol/tasks":{"a":1}}`, true},
		{`{"io.modelcontextprotocol\/tasks":{}}`, true}, // an escape spells the same name
		{`{"io.modelcontextprotocol\u002ftasks":{}}`, true},
		{`{"x":"io.modelcontextprotocol/tasks"}`, false}, // a value, not a name
		{`{"io.modelcontextprotocol/tasks":`, false},     // not JSON
	} {
		if _, got := Extension(json.RawMessage(c.ext), TasksExtension); got != c.want {
			t.Errorf("Extension(%s) = %v, want %v", c.ext, got, c.want)
		}
	}
}

// TestExtensionAbsentCostsNothing: capabilities without the extension, as
// most upstreams and clients declare them, are not decoded on every call.
func TestExtensionAbsentCostsNothing(t *testing.T) {
	ext := json.RawMessage(`{"io.example/other":{"setting":true}}`)
	if n := testing.AllocsPerRun(100, func() { Extension(ext, TasksExtension) }); n != 0 {
		t.Errorf("Extension allocates %v times for an extension not declared", n)
	}
}
