package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestDepthLimit: a file nested deeper than MaxDepth is refused before
// anything is built from it (a config nested 100,000 deep made `mcpx config
// check` use 4 GB), with a message saying so; brackets in strings and
// comments do not count, and MaxDepth itself is accepted.
func TestDepthLimit(t *testing.T) {
	for _, n := range []int{10_000, 100_000} {
		t.Run(fmt.Sprint("nested ", n), func(t *testing.T) {
			data := []byte(`{"mcpServers": {}, "x": ` + strings.Repeat("[", n) + strings.Repeat("]", n) + "}")
			var err error
			used := allocated(func() { _, err = Parse("deep.json", data, testEnv) })
			var ce *Error
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "deep.json: objects and arrays nest more than 64 deep (line 1)") {
				t.Errorf("Parse: %v; want the depth limit named", err)
			}
			if used > 1<<20 {
				t.Errorf("Parse allocated %d bytes for a file of %d", used, len(data))
			}
		})
	}
	t.Run("at the limit, and brackets in strings and comments", func(t *testing.T) {
		deep := strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1)
		data := "// [[[[ " + strings.Repeat("[", 100) + "\n" +
			`{"mcpServers": {"a": {"command": "x", "args": ["` + strings.Repeat("[{", 100) + `\"["]}},` +
			"/* " + strings.Repeat("{", 100) + " */ \"x\": " + deep + "}"
		if _, err := Parse("ok.json", []byte(data), testEnv); err != nil {
			t.Errorf("Parse: %v", err)
		}
	})
}

// TestSizeLimit: Load reads at most MaxFileSize (+1) bytes of a file and
// refuses a larger one, saying so; Parse refuses larger data too.
func TestSizeLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"mcpServers": {}}`)
	if err := f.Truncate(64 << 20); err != nil { // sparse: 64 MiB of NULs
		t.Fatal(err)
	}
	f.Close()
	var ce *Error
	used := allocated(func() { _, err = Load(path) })
	if !errors.As(err, &ce) || err.Error() != path+": the file is larger than 4194304 bytes (4 MiB), the most a configuration may be" {
		t.Errorf("Load: %v; want the size limit named", err)
	}
	if used > 32<<20 { // the file's first 4 MiB, read in growing buffers (more under -race)
		t.Errorf("Load allocated %d bytes for a 64 MiB file", used)
	}
	data := []byte(`{"mcpServers": {}}` + strings.Repeat(" ", MaxFileSize))
	if _, err := Parse("big.json", data, testEnv); !errors.As(err, &ce) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Parse of %d bytes: %v", len(data), err)
	}
	if _, err := Parse("ok.json", data[:MaxFileSize], testEnv); err != nil {
		t.Errorf("Parse of exactly MaxFileSize bytes: %v", err)
	}
}

// TestLimitsDocumented: the schema's description, and so docs/gateway.md,
// states the limits as the constants have them.
func TestLimitsDocumented(t *testing.T) {
	var top struct{ Description string }
	if err := json.Unmarshal(Schema(), &top); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprintf("at most %d MiB", MaxFileSize>>20), fmt.Sprintf("at most %d deep", MaxDepth)} {
		if !strings.Contains(top.Description, want) {
			t.Errorf("the schema's description does not say %q: %s", want, top.Description)
		}
	}
}

// TestServerLimit: a file naming more than MaxServers servers is refused,
// saying so; MaxServers are accepted.
func TestServerLimit(t *testing.T) {
	file := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`{"mcpServers": {`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"s%d": {"command": "x"}`, i)
		}
		b.WriteString("}}")
		return []byte(b.String())
	}
	if c, err := Parse("ok.json", file(MaxServers), testEnv); err != nil || len(c.Servers) != MaxServers {
		t.Errorf("%d servers: %v", MaxServers, err)
	}
	_, err := Parse("many.json", file(MaxServers+1), testEnv)
	var ce *Error
	if !errors.As(err, &ce) || err.Error() != "many.json: /mcpServers: has 257 servers; at most 256 are allowed" {
		t.Errorf("%d servers: %v", MaxServers+1, err)
	}
	if !strings.Contains(string(Schema()), "at most 256") {
		t.Errorf("the schema does not state the limit")
	}
}
