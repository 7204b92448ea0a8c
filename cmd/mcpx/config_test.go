package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/runtime/config"
)

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good.json", `{"mcpServers": {"b": {"command": "x"}, "a": {"url": "https://h/mcp"}, /* c */ "c": {"command": "y",},}}`)
	one := write("one.json", `{"mcpServers": {"only": {"command": "x"}}}`)
	bad := write("bad.json", `{"mcpServers": {"db": {"command": "x", "mcpx": {"start": "soon", "timeout": 30}}, "web": {}}}`)

	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string // exact
		errHas   string // contained in stderr
	}{
		{name: "check: a good file lists its servers by name", args: []string{"config", "check", good}, code: 0,
			out: good + ": ok, 3 servers: a, b, c\n"},
		{name: "check: one server", args: []string{"config", "check", one}, code: 0,
			out: one + ": ok, 1 server: only\n"},
		{name: "check: the examples", args: []string{"config", "check", "../../examples/mcpx.json"}, code: 0,
			out: "../../examples/mcpx.json: ok, 2 servers: everything, fixture\n"},
		{name: "check: every problem on stderr, one a line", args: []string{"config", "check", bad}, code: 1,
			err: bad + `: /mcpServers/db/mcpx/start: must be one of "eager", "lazy"` + "\n" +
				bad + `: /mcpServers/db/mcpx/timeout: must be a string, not a number` + "\n" +
				bad + `: /mcpServers/web: must have "command" (a local server) or "url" (a remote one)` + "\n"},
		{name: "check: a missing file", args: []string{"config", "check", filepath.Join(dir, "none.json")}, code: 1,
			errHas: "no such file"},
		{name: "check: no file", args: []string{"config", "check"}, code: 2, errHas: "want one FILE"},
		{name: "schema prints the schema", args: []string{"config", "schema"}, code: 0, out: string(config.Schema())},
		{name: "no subcommand", args: []string{"config"}, code: 2, errHas: "missing subcommand"},
		{name: "an unknown subcommand", args: []string{"config", "lint"}, code: 2, errHas: `unknown subcommand "lint"`},
		{name: "help", args: []string{"config", "-h"}, code: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := mcpx(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.code, errOut)
			}
			if tt.out != "" && out != tt.out {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, tt.out)
			}
			if tt.err != "" && errOut != tt.err {
				t.Errorf("stderr:\n%s\nwant:\n%s", errOut, tt.err)
			}
			if tt.errHas != "" && !strings.Contains(errOut, tt.errHas) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.errHas)
			}
			if tt.code == 0 && errOut != "" {
				t.Errorf("stderr %q, want nothing", errOut)
			}
		})
	}

	var v any
	_, out, _ := mcpx(t, "config", "schema")
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Errorf("config schema does not print JSON: %v", err)
	}
	if _, out, _ := mcpx(t, "help"); !strings.Contains(out, "config") {
		t.Errorf("usage does not mention config")
	}
}
