package config

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "write docs/gateway.md from the schema")

// gatewayDoc is docs/gateway.md, from this package's directory.
var gatewayDoc = filepath.Join("..", "..", "docs", "gateway.md")

// TestGatewayDoc: docs/gateway.md is what GatewayDoc renders from the
// embedded schema, so the reference cannot drift from what `mcpx config
// check` enforces. make fresh only checks generated/; this test is what
// guards the page.
func TestGatewayDoc(t *testing.T) {
	want, err := GatewayDoc()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(gatewayDoc, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(gatewayDoc)
	if err != nil {
		t.Fatalf("%v; write it with: %s", err, DocCommand)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/gateway.md differs from the rendering of runtime/config/schema.json; run: %s\n%s", DocCommand, firstDiff(got, want))
	}
}

// firstDiff names the first line where the page and the rendering differ.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n  file:     " + gl + "\n  rendered: " + wl
		}
	}
	return ""
}

// TestGatewayDocCoversTheSchema: every key the schema declares, at every
// level, has a row of its own, and each object definition a section.
func TestGatewayDocCoversTheSchema(t *testing.T) {
	page, err := GatewayDoc()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if props, ok := m["properties"].(map[string]any); ok && !strings.Contains(path, "dependentSchemas") {
			for name := range props {
				if !bytes.Contains(page, []byte("| `"+name+"` |")) {
					t.Errorf("%s/properties/%s has no row", path, name)
				}
			}
		}
		if title, ok := m["title"].(string); ok && path != "" && !bytes.Contains(page, []byte("\n## "+title+"\n")) {
			t.Errorf("%s (%q) has no section", path, title)
		}
		for k, c := range m {
			walk(path+"/"+k, c)
		}
	}
	walk("", doc)
}

// TestSchemaDefaults: the defaults the schema (and so the page) states are
// the ones the parser applies.
func TestSchemaDefaults(t *testing.T) {
	var doc struct {
		Defs struct {
			MCPX struct {
				Properties map[string]struct {
					Default json.RawMessage `json:"default"`
				} `json:"properties"`
			} `json:"mcpx"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatal(err)
	}
	props := doc.Defs.MCPX.Properties
	var timeout string
	if err := json.Unmarshal(props["timeout"].Default, &timeout); err != nil {
		t.Fatalf("timeout default: %v", err)
	}
	if d, err := time.ParseDuration(timeout); err != nil || d != DefaultTimeout {
		t.Errorf("schema says timeout %q, the parser applies %s", timeout, DefaultTimeout)
	}
	c, err := Parse("defaults.json", []byte(`{"mcpServers":{"a":{"command":"x"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Servers[0]
	if string(props["start"].Default) != `"lazy"` || s.Eager {
		t.Errorf("schema says start %s, the parser gives Eager=%v", props["start"].Default, s.Eager)
	}
	if string(props["root"].Default) != `false` || s.Root {
		t.Errorf("schema says root %s, the parser gives Root=%v", props["root"].Default, s.Root)
	}
	// maxInFlight's default (256) is the upstream client's: 0 here means it.
	if string(props["maxInFlight"].Default) != `256` || s.MaxInFlight != 0 {
		t.Errorf("schema says maxInFlight %s, the parser gives %d (0: the upstream's default)", props["maxInFlight"].Default, s.MaxInFlight)
	}
}

// TestGatewayDocRefusesUnknownKeywords: a keyword the renderer cannot show
// fails the rendering instead of vanishing from the page.
func TestGatewayDocRefusesUnknownKeywords(t *testing.T) {
	saved := schemaJSON
	defer func() { schemaJSON = saved }()
	schemaJSON = []byte(`{"type":"object","properties":{"name":{"type":"string","maxLength":8,"description":"d"}}}`)
	if _, err := GatewayDoc(); err == nil || !strings.Contains(err.Error(), "maxLength") {
		t.Errorf("GatewayDoc = %v, want an error naming maxLength", err)
	}
}
