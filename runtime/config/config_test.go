package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// env is a fixed environment for ${VAR}.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

var testEnv = env(map[string]string{"TOKEN": "s3cret", "HOST": "mcp.example.com", "EMPTY": ""})

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []Server
	}{
		{
			name: "a Claude Desktop file parses as it is",
			file: `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_literal"}
    }
  },
  "preferences": {"quickEntryShortcut": "off"}
}`,
			want: []Server{
				{Name: "filesystem", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"},
					Transport: "stdio", Prefix: "filesystem__", Timeout: DefaultTimeout},
				{Name: "github", Command: "docker", Args: []string{"run", "-i", "--rm", "ghcr.io/github/github-mcp-server"},
					Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_literal"}, Transport: "stdio", Prefix: "github__", Timeout: DefaultTimeout},
			},
		},
		{
			name: "comments and trailing commas are tolerated",
			file: `// servers
{
  /* the one */
  "mcpServers": {
    "a": {"command": "x", "args": ["1", "2",],}, // trailing
  },
}`,
			want: []Server{{Name: "a", Command: "x", Args: []string{"1", "2"}, Transport: "stdio", Prefix: "a__", Timeout: DefaultTimeout}},
		},
		{
			name: "a remote server: url and headers, type http by default",
			file: `{"mcpServers": {"r": {"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}`,
			want: []Server{{Name: "r", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"},
				Transport: "http", Prefix: "r__", Timeout: DefaultTimeout}},
		},
		{
			name: "VS Code's servers and type are accepted",
			file: `{"inputs": [], "servers": {"s": {"type": "stdio", "command": "x"}, "old": {"type": "sse", "url": "http://localhost:3001/sse"}}}`,
			want: []Server{
				{Name: "old", URL: "http://localhost:3001/sse", Transport: "sse", Prefix: "old__", Timeout: DefaultTimeout},
				{Name: "s", Command: "x", Transport: "stdio", Prefix: "s__", Timeout: DefaultTimeout},
			},
		},
		{
			name: "env values expand ${VAR}, ${env:VAR}, defaults and $${; args and cwd do not",
			file: `{"mcpServers": {"a": {"command": "x", "args": ["${TOKEN}"], "cwd": "${HOST}",
  "env": {"A": "${TOKEN}", "B": "${env:TOKEN}", "C": "${UNSET:-dflt}", "D": "${EMPTY:-dflt}", "E": "$${TOKEN}", "F": "a$b ${HOST}:${TOKEN}", "G": "${EMPTY}"}}}}`,
			want: []Server{{Name: "a", Command: "x", Args: []string{"${TOKEN}"}, Cwd: "${HOST}", Transport: "stdio", Prefix: "a__", Timeout: DefaultTimeout,
				Env: map[string]string{"A": "s3cret", "B": "s3cret", "C": "dflt", "D": "dflt", "E": "${TOKEN}", "F": "a$b mcp.example.com:s3cret", "G": ""}}},
		},
		{
			name: "default prefix is name__ and default timeout 60s; lazy, not root",
			file: `{"mcpServers": {"db": {"command": "x"}}}`,
			want: []Server{{Name: "db", Command: "x", Transport: "stdio", Prefix: "db__", Timeout: 60 * time.Second}},
		},
		{
			name: "the mcpx block",
			file: `{"mcpServers": {
  "a": {"command": "x", "mcpx": {"prefix": "", "includeTools": ["t1", "t2"], "timeout": "1m30s", "maxInFlight": 8, "start": "eager"}},
  "b": {"command": "y", "mcpx": {"prefix": "bee.", "excludeTools": ["t3"], "start": "lazy"}},
  "c": {"command": "z", "mcpx": {"root": true, "prefix": ""}}
}}`,
			want: []Server{
				{Name: "a", Command: "x", Transport: "stdio", Prefix: "", Include: []string{"t1", "t2"}, Timeout: 90 * time.Second, MaxInFlight: 8, Eager: true},
				{Name: "b", Command: "y", Transport: "stdio", Prefix: "bee.", Exclude: []string{"t3"}, Timeout: DefaultTimeout},
				{Name: "c", Command: "z", Transport: "stdio", Prefix: "", Timeout: DefaultTimeout, Root: true},
			},
		},
		{
			name: "no servers at all",
			file: `{"mcpServers": {}}`,
			want: []Server{},
		},
		{
			name: "names at the limits",
			file: `{"mcpServers": {"A-z_0": {"command": "x"}, "` + strings.Repeat("n", 64) + `": {"command": "x"}}}`,
			want: []Server{
				{Name: "A-z_0", Command: "x", Transport: "stdio", Prefix: "A-z_0__", Timeout: DefaultTimeout},
				{Name: strings.Repeat("n", 64), Command: "x", Transport: "stdio", Prefix: strings.Repeat("n", 64) + "__", Timeout: DefaultTimeout},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("mcpx.json", []byte(tt.file), testEnv)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, c.Servers, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string // the error's lines, exactly
	}{
		{
			name: "not JSON",
			file: `{"mcpServers": {"a": {"command": "x",}`,
			want: []string{`mcpx.json: line 1, column 39: parsing object after value: unexpected EOF`},
		},
		{
			name: "not an object",
			file: `[]`,
			want: []string{`mcpx.json: must be an object, not an array`},
		},
		{
			name: "no mcpServers",
			file: `{"mcpServer": {}}`,
			want: []string{`mcpx.json: must have "mcpServers" (or VS Code's "servers")`},
		},
		{
			name: "both mcpServers and servers",
			file: `{"mcpServers": {}, "servers": {}}`,
			want: []string{`mcpx.json: has both "mcpServers" and "servers"; use one`},
		},
		{
			name: "mcpServers of the wrong type",
			file: `{"mcpServers": []}`,
			want: []string{`mcpx.json: /mcpServers: must be an object, not an array`},
		},
		{
			name: "a duplicated server name",
			file: `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`,
			want: []string{`mcpx.json: /mcpServers/a: duplicate key "a"`},
		},
		{
			name: "server names outside the pattern",
			file: `{"mcpServers": {"has space": {"command": "x"}, "": {"command": "x"}, "` + strings.Repeat("n", 65) + `": {"command": "x"}, "a.b": {"command": "x"}}}`,
			want: []string{
				`mcpx.json: /mcpServers/has space: server name must be 1 to 64 letters, digits, '_' or '-'`,
				`mcpx.json: /mcpServers/: server name must be 1 to 64 letters, digits, '_' or '-'`,
				`mcpx.json: /mcpServers/` + strings.Repeat("n", 65) + `: server name must be 1 to 64 letters, digits, '_' or '-'`,
				`mcpx.json: /mcpServers/a.b: server name must be 1 to 64 letters, digits, '_' or '-'`,
			},
		},
		{
			name: "neither command nor url",
			file: `{"mcpServers": {"a": {"args": []}}}`,
			want: []string{`mcpx.json: /mcpServers/a: must have "command" (a local server) or "url" (a remote one)`},
		},
		{
			name: "both command and url",
			file: `{"mcpServers": {"a": {"command": "x", "url": "http://h/mcp"}}}`,
			want: []string{`mcpx.json: /mcpServers/a: has both "command" and "url"; a server is local or remote, not both`},
		},
		{
			name: "an unknown key in a server",
			file: `{"mcpServers": {"a": {"command": "x", "envFile": ".env"}}}`,
			want: []string{`mcpx.json: /mcpServers/a/envFile: unknown key; expected one of "args", "command", "cwd", "env", "headers", "mcpx", "type", "url"`},
		},
		{
			name: "wrong types in a server",
			file: `{"mcpServers": {"a": {"command": 1, "args": "x y", "env": {"N": 1}}, "b": {"command": "", "args": [1]}}}`,
			want: []string{
				`mcpx.json: /mcpServers/a/command: must be a string, not a number`,
				`mcpx.json: /mcpServers/a/args: must be an array, not a string`,
				`mcpx.json: /mcpServers/a/env/N: must be a string, not a number`,
				`mcpx.json: /mcpServers/b/command: must not be empty`,
				`mcpx.json: /mcpServers/b/args/0: must be a string, not a number`,
			},
		},
		{
			name: "local keys on a remote server and headers on a local one",
			file: `{"mcpServers": {"r": {"url": "https://h/mcp", "args": [], "env": {}, "cwd": "/"}, "l": {"command": "x", "headers": {}}}}`,
			want: []string{
				`mcpx.json: /mcpServers/r/args: only a local server (one with "command") takes this`,
				`mcpx.json: /mcpServers/r/env: only a local server (one with "command") takes this`,
				`mcpx.json: /mcpServers/r/cwd: only a local server (one with "command") takes this`,
				`mcpx.json: /mcpServers/l/headers: only a remote server (one with "url") takes this`,
			},
		},
		{
			name: "a url that is not http",
			file: `{"mcpServers": {"r": {"url": "ftp://h/mcp"}}}`,
			want: []string{`mcpx.json: /mcpServers/r/url: must be an http:// or https:// URL`},
		},
		{
			name: "an unknown type",
			file: `{"servers": {"c": {"type": "ws", "url": "http://h"}}}`,
			want: []string{`mcpx.json: /servers/c/type: must be one of "stdio", "http", "sse"`},
		},
		{
			name: "type disagreeing with command or url (checked once the schema is satisfied)",
			file: `{"servers": {"a": {"type": "http", "command": "x"}, "b": {"type": "stdio", "url": "http://h"}}}`,
			want: []string{
				`mcpx.json: /servers/a/type: must be "stdio" for a server with "command"`,
				`mcpx.json: /servers/b/type: must be "http" or "sse" for a server with "url"`,
			},
		},
		{
			name: "an unset variable names the file, the server and the variable",
			file: `{"mcpServers": {"db": {"command": "x", "env": {"PASSWORD": "${DB_PASSWORD}"}}, "r": {"url": "https://${NOHOST}/", "headers": {"Authorization": "Bearer ${NOTOKEN}"}}}}`,
			want: []string{
				`mcpx.json: /mcpServers/db/env/PASSWORD: server "db": environment variable DB_PASSWORD is not set`,
				`mcpx.json: /mcpServers/r/url: server "r": environment variable NOHOST is not set`,
				`mcpx.json: /mcpServers/r/headers/Authorization: server "r": environment variable NOTOKEN is not set`,
			},
		},
		{
			name: "malformed variables",
			file: `{"mcpServers": {"a": {"command": "x", "env": {"A": "${TOKEN", "B": "${input:key}", "C": "${}"}}}}`,
			want: []string{
				`mcpx.json: /mcpServers/a/env/A: "${TOKEN" has no closing '}' (write $${ for a literal ${)`,
				`mcpx.json: /mcpServers/a/env/B: ${input:key}: only ${VAR}, ${env:VAR} and ${VAR:-default} are expanded`,
				`mcpx.json: /mcpServers/a/env/C: ${}: only ${VAR}, ${env:VAR} and ${VAR:-default} are expanded`,
			},
		},
		{
			name: "an unknown key and wrong types in the mcpx block",
			file: `{"mcpServers": {"db": {"command": "x", "mcpx": {"start": "soon", "timeout": 30, "root": "yes", "prefix": 1, "includeTools": "t", "exclude": []}}}}`,
			want: []string{
				`mcpx.json: /mcpServers/db/mcpx/start: must be one of "eager", "lazy"`,
				`mcpx.json: /mcpServers/db/mcpx/timeout: must be a string, not a number`,
				`mcpx.json: /mcpServers/db/mcpx/root: must be true or false, not a string`,
				`mcpx.json: /mcpServers/db/mcpx/prefix: must be a string, not a number`,
				`mcpx.json: /mcpServers/db/mcpx/includeTools: must be an array, not a string`,
				`mcpx.json: /mcpServers/db/mcpx/exclude: unknown key; expected one of "cache", "excludeTools", "expose", "includeTools", "maxInFlight", "oauth", "perClientIdle", "perClientMax", "prefix", "root", "session", "setup", "start", "timeout"`,
			},
		},
		{
			name: "maxInFlight that is not a positive integer",
			file: `{"mcpServers": {"a": {"command": "x", "mcpx": {"maxInFlight": 0}}, "b": {"command": "x", "mcpx": {"maxInFlight": 1.5}}, "c": {"command": "x", "mcpx": {"maxInFlight": "8"}}}}`,
			want: []string{
				`mcpx.json: /mcpServers/a/mcpx/maxInFlight: must be at least 1`,
				`mcpx.json: /mcpServers/b/mcpx/maxInFlight: must be an integer, not a number`,
				`mcpx.json: /mcpServers/c/mcpx/maxInFlight: must be an integer, not a string`,
			},
		},
		{
			name: "timeouts that are not durations",
			file: `{"mcpServers": {"a": {"command": "x", "mcpx": {"timeout": "30"}}, "c": {"command": "x", "mcpx": {"timeout": "-1s"}}, "d": {"command": "x", "mcpx": {"timeout": "1d"}}}}`,
			want: []string{
				`mcpx.json: /mcpServers/a/mcpx/timeout: must be a duration such as "30s", "1m30s" or "500ms"`,
				`mcpx.json: /mcpServers/c/mcpx/timeout: must be a duration such as "30s", "1m30s" or "500ms"`,
				`mcpx.json: /mcpServers/d/mcpx/timeout: must be a duration such as "30s", "1m30s" or "500ms"`,
			},
		},
		{
			name: "a zero timeout",
			file: `{"mcpServers": {"b": {"command": "x", "mcpx": {"timeout": "0s"}}}}`,
			want: []string{`mcpx.json: /mcpServers/b/mcpx/timeout: must be more than zero`},
		},
		{
			name: "both includeTools and excludeTools",
			file: `{"mcpServers": {"a": {"command": "x", "mcpx": {"includeTools": ["t"], "excludeTools": ["u"]}}}}`,
			want: []string{`mcpx.json: /mcpServers/a/mcpx: has both "includeTools" and "excludeTools"; use one`},
		},
		{
			name: "tool lists with an empty or repeated name",
			file: `{"mcpServers": {"a": {"command": "x", "mcpx": {"includeTools": ["t", ""]}}, "b": {"command": "x", "mcpx": {"excludeTools": ["t", "t"]}}}}`,
			want: []string{
				`mcpx.json: /mcpServers/a/mcpx/includeTools/1: must not be empty`,
				`mcpx.json: /mcpServers/b/mcpx/excludeTools: items 0 and 1 are the same`,
			},
		},
		{
			name: "a prefix with characters a tool name cannot have",
			file: `{"mcpServers": {"a": {"command": "x", "mcpx": {"prefix": "a/"}}}}`,
			want: []string{`mcpx.json: /mcpServers/a/mcpx/prefix: must be at most 64 letters, digits, '_', '-' or '.'`},
		},
		{
			name: "two roots",
			file: `{"mcpServers": {"a": {"command": "x", "mcpx": {"root": true}}, "b": {"command": "x", "mcpx": {"root": true}}}}`,
			want: []string{`mcpx.json: /mcpServers/b/mcpx/root: only one server may be the root; "a" already is`},
		},
		{
			name: "a prefix on the root",
			file: `{"mcpServers": {"a": {"command": "x", "mcpx": {"root": true, "prefix": "a_"}}}}`,
			want: []string{`mcpx.json: /mcpServers/a/mcpx/prefix: the root server's names are not prefixed; remove "prefix" or "root"`},
		},
		{
			name: "two servers with one prefix",
			file: `{"mcpServers": {"a": {"command": "x"}, "b": {"command": "x", "mcpx": {"prefix": "p_"}}, "c": {"command": "x", "mcpx": {"prefix": "p_"}}, "d": {"command": "x", "mcpx": {"prefix": "a__"}}, "e": {"command": "x", "mcpx": {"prefix": ""}}, "f": {"command": "x", "mcpx": {"prefix": ""}}}}`,
			want: []string{
				`mcpx.json: /mcpServers/c/mcpx/prefix: prefix "p_" is already "b"'s; tool names would clash`,
				`mcpx.json: /mcpServers/d/mcpx/prefix: prefix "a__" is already "a"'s; tool names would clash`,
			},
		},
		{
			name: "problems come in the order of the file",
			file: `{"mcpServers": {"z": {"command": 1}, "a": {"command": "x", "mcpx": {"start": 2}}, "m": {"bogus": true, "command": "x"}}}`,
			want: []string{
				`mcpx.json: /mcpServers/z/command: must be a string, not a number`,
				`mcpx.json: /mcpServers/a/mcpx/start: must be one of "eager", "lazy"`,
				`mcpx.json: /mcpServers/m/bogus: unknown key; expected one of "args", "command", "cwd", "env", "headers", "mcpx", "type", "url"`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("mcpx.json", []byte(tt.file), testEnv)
			if err == nil {
				t.Fatalf("Parse succeeded with %d servers; want an error", len(c.Servers))
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error is %T, not *config.Error: %v", err, err)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("error lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	t.Run("relative cwd is relative to the file; messages name the path", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "mcpx.json")
		os.WriteFile(path, []byte(`{"mcpServers": {"a": {"command": "x", "cwd": "sub"}, "b": {"command": "x", "cwd": "/abs"}, "c": {"command": "x"}}}`), 0o644)
		c, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		got := []string{c.Servers[0].Cwd, c.Servers[1].Cwd, c.Servers[2].Cwd}
		want := []string{filepath.Join(dir, "sub"), "/abs", ""}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("cwd (-want +got):\n%s", diff)
		}
		os.WriteFile(path, []byte(`{"mcpServers": {"a": {}}}`), 0o644)
		if _, err := Load(path); err == nil || !strings.HasPrefix(err.Error(), path+": /mcpServers/a: ") {
			t.Errorf("Load error %q does not start with the path", err)
		}
	})
	t.Run("variables come from the process environment", func(t *testing.T) {
		t.Setenv("MCPX_CONFIG_TEST_TOKEN", "tok")
		path := filepath.Join(t.TempDir(), "mcpx.json")
		os.WriteFile(path, []byte(`{"mcpServers": {"a": {"command": "x", "env": {"T": "${MCPX_CONFIG_TEST_TOKEN}"}}}}`), 0o644)
		c, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Servers[0].Env["T"]; got != "tok" {
			t.Errorf("env T = %q, want tok", got)
		}
	})
	t.Run("a missing file", func(t *testing.T) {
		if _, err := Load(filepath.Join(t.TempDir(), "none.json")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Load: %v, want not exist", err)
		}
	})
}

func TestExamplesParse(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*.json")
	if len(files) < 2 {
		t.Fatalf("examples: %v, want mcpx.json and claude-desktop.json at least", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			c, err := Parse(f, mustRead(t, f), env(map[string]string{})) // no variables needed
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Servers) == 0 {
				t.Error("no servers")
			}
		})
	}
	t.Run("mcpx.json has what it documents", func(t *testing.T) {
		c, err := Load("../../examples/mcpx.json")
		if err != nil {
			t.Fatal(err)
		}
		ev, fx := c.Servers[0], c.Servers[1]
		if ev.Name != "everything" || ev.Prefix != "ev_" || !ev.Eager || ev.Timeout != 30*time.Second || len(ev.Exclude) != 2 || !strings.Contains(ev.Setup, "make everything") {
			t.Errorf("everything: %+v", ev)
		}
		if fx.Name != "fixture" || !fx.Root || fx.Prefix != "" || fx.Timeout != 2*time.Minute {
			t.Errorf("fixture: %+v", fx)
		}
		root, _ := filepath.Abs("../..")
		if ev.Cwd != root {
			t.Errorf("everything cwd %q, want the repository root %q", ev.Cwd, root)
		}
	})
}

func TestSchema(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(Schema(), &doc); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v, want draft 2020-12", doc["$schema"])
	}
	compiled() // panics if the embedded schema does not compile
	// Every property the schema declares has a description.
	var walk func(path string, v any)
	walk = func(path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for name, p := range props {
				pm, _ := p.(map[string]any)
				if _, ok := pm["description"]; !ok && !strings.Contains(path, "dependentSchemas") {
					t.Errorf("%s/properties/%s has no description", path, name)
				}
			}
		}
		for k, c := range m {
			walk(path+"/"+k, c)
		}
	}
	walk("", doc)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMessageFallback: a failure the schema's own wording does not cover
// is worded by the validator library, not a crash (a nil printer was).
func TestMessageFallback(t *testing.T) {
	p := &parser{}
	got := p.message(&jsonschema.ValidationError{ErrorKind: &kind.MaxLength{Got: 5, Want: 3}})
	if !strings.Contains(got, "3") {
		t.Errorf("message = %q, want the library's wording of maxLength 3", got)
	}
}

// FuzzParse: whatever the file holds, Parse returns a configuration or an
// error, never a panic, and an error names the file.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers": {"db": {"command": "x"}}}`,
		`{"mcpServers": {"a": {"url": "http://h/${HOST}", "headers": {"A": "${TOKEN:-x}"}, "mcpx": {"root": true, "maxInFlight": 3}}}}`,
		`{"mcpServers": {"db": {"command": "x", "mcpx": {"start": "soon", "timeout": 30, "root": "yes", "prefix": 1, "includeTools": "t", "exclude": []}}}}`,
		`{"mcpServers": {"a": {"command": "x", "url": "y", "mcpx": {"maxInFlight": 0, "includeTools": ["t"], "excludeTools": ["t"]}}}}`,
		"// comment\n{\"servers\": {\"a\": {\"type\": \"sse\", \"url\": \"u\",},},}",
		`{"mcpServers": []}`, `[]`, `{`, ``,
	} {
		f.Add(s)
	}
	env := func(k string) (string, bool) { return "v", k == "TOKEN" }
	f.Fuzz(func(t *testing.T, file string) {
		c, err := Parse("fuzz.json", []byte(file), env)
		if err == nil && c == nil {
			t.Fatal("no configuration and no error")
		}
		if err != nil && !strings.Contains(err.Error(), "fuzz.json") {
			t.Errorf("error %q does not name the file", err)
		}
	})
}
