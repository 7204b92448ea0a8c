// Package config reads the gateway's configuration file: the upstream MCP
// servers mcpx fronts.
//
// # Format
//
// The file is the "mcpServers" JSON that Claude Desktop, Cursor and VS Code
// use, accepted as it is, so a server entry can be copied between them and
// mcpx:
//
//	{
//	  "mcpServers": {
//	    "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
//	    "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
//	  }
//	}
//
// What is accepted:
//
//   - The top level holds "mcpServers", or VS Code's "servers" (not both).
//     Other top-level keys are left alone (Claude Desktop keeps its
//     preferences there, VS Code its "inputs"), so an application's own file
//     can be used as it is.
//   - A server is local, with "command" and optional "args", "env" and "cwd",
//     or remote, with "url" and optional "headers"; it has exactly one of
//     "command" and "url". VS Code's "type" is accepted: "stdio" for a
//     command, "http" (Streamable HTTP, the default for a url) or "sse" (the
//     2024-11-05 HTTP+SSE transport, its "url" the event stream's) for a
//     url. Any other key in a server,
//     such as VS Code's "envFile" or Cline's "disabled", is an error: mcpx
//     would not do what it asks.
//   - An optional "mcpx" block per server holds mcpx's own settings:
//     "prefix", "includeTools"/"excludeTools", "timeout", "maxInFlight",
//     "start", "session" with "perClientMax" and "perClientIdle", "cache",
//     "expose", "oauth" and "root" (see [Server]).
//   - Each server name is a namespace and must match ^[a-zA-Z0-9_-]{1,64}$.
//   - An optional top-level "mcpx" block holds mcpx's settings for the
//     gateway as a whole: "stateKey", the park and task settings, "auth"
//     and "access", "openapi" and "commands" (tools mcpx makes),
//     "discovery" and "apiTools" (see [Config]).
//
// Comments (// and /* */) and trailing commas are tolerated, as VS Code
// writes and people hand-edit them: the file is read with
// github.com/tailscale/hujson, which parses that JSON superset (HuJSON, a
// close cousin of JSONC) and standardizes it to plain JSON by blanking out
// comments and trailing commas byte for byte, so offsets are kept and the
// result decodes with encoding/json and validates against the schema
// unchanged. A duplicated key is an error rather than last-one-wins.
//
// # Variables
//
// ${VAR} is replaced from the environment in three places only: the values
// of "env", the values of "headers", and "url" (an API key in a query
// string, or a host that differs between machines). ${env:VAR}, VS Code's
// spelling, means the same; ${VAR:-default} gives a default for an unset or
// empty variable; $${ is a literal ${. An unset variable without a default
// is an error naming the file, the server and the variable. Nothing else
// is expanded: "command", "args", "cwd" and names are taken literally.
//
// # Limits
//
// A file is at most [MaxFileSize] bytes (4 MiB; [Load] reads no more) and
// its objects and arrays nest at most [MaxDepth] (64) deep. Both are checked
// before the file is parsed, each a one-line [*Error]. It names at most
// [MaxServers] (256) servers.
//
// # Validation
//
// docs/gateway.md, the format's reference, is rendered from the schema by
// [GatewayDoc]. The file is checked against the JSON Schema returned by [Schema] (draft
// 2020-12; closed wherever the keys are mcpx's), and, once that passes, for
// what a schema cannot say (two roots, an explicit prefix on the root, a zero timeout,
// "type" disagreeing with command/url, two servers with one prefix). Every
// problem is reported, one line each, as
//
//	FILE: /json/pointer: what was expected
//
// in document order; the error is an [*Error].
package config

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpx-dev/mcpx/runtime/auth"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/tailscale/hujson"

	"github.com/mcpx-dev/mcpx/runtime/requeststate"
)

// DefaultTimeout is a server's request timeout when "timeout" is not set.
const DefaultTimeout = 60 * time.Second

// Limits on a configuration file, checked before anything else is done
// with it, so that a file that is not a configuration (a log, a generated
// blob nested a hundred thousand deep) fails at once, in little memory,
// with a clear message.
const (
	// MaxFileSize bounds a file's size in bytes: [Load] reads no more.
	MaxFileSize = 4 << 20
	// MaxDepth bounds how deeply objects and arrays nest; a configuration
	// needs 5.
	MaxDepth = 64
	// MaxServers bounds how many servers a file may name: each is a
	// process or a connection, and a watcher in the gateway.
	MaxServers = 256
)

// Config is a parsed configuration file.
type Config struct {
	// Servers are the upstream servers, sorted by name.
	Servers []Server
	// StateKey is "mcpx.stateKey" as written, checked by
	// requeststate.ParseKeys: the keys that seal requestState
	// (requeststate.Load); "" when not set.
	StateKey string

	// ParkTimeout is "mcpx.parkTimeout": how long a call parked for a
	// 2026-07-28 client's answer waits for its retry; 0 when not set
	// (the gateway's default).
	ParkTimeout time.Duration
	// MaxParked is "mcpx.maxParked": how many calls may be parked at
	// once; 0 when not set (the gateway's default).
	MaxParked int

	// Auth is "mcpx.auth": who may connect over HTTP; nil when not set
	// (anyone may).
	Auth *auth.Config
	// Access is "mcpx.access": what each principal may use; nil when not
	// set (everything).
	Access *auth.Policy
	// Store is "mcpx.store", ${VAR} expanded: "memory", a Redis URL, or ""
	// when not set (memory).
	Store string
	// Discovery is "mcpx.discovery": offer the discovery tools even when
	// no server is lazy.
	Discovery bool
	// APITools is "mcpx.apiTools": the /v1 API's operations as tools.
	APITools bool
	// OpenAPI are "mcpx.openapi", sorted by namespace: tools mcpx makes
	// from OpenAPI documents.
	OpenAPI []OpenAPISource
	// Commands are "mcpx.commands", sorted by namespace: tools mcpx makes
	// from command-line programs.
	Commands []CommandSet
	// Tasks are the task settings of the mcpx block (taskEager,
	// taskAfter, taskTTL, maxTasks); each 0 when not set (the edge's and
	// the task store's defaults).
	Tasks TaskSettings
}

// TaskSettings are how mcpx holds tasks for its clients.
type TaskSettings struct {
	// Eager is "mcpx.taskEager": how long a call of a tool that supports
	// tasks may take to finish, or ask its first question, before a
	// 2026-07-28 client gets a task for it.
	Eager time.Duration
	// After is "mcpx.taskAfter": the same for a tool that declares no
	// task support.
	After time.Duration
	// TTL is "mcpx.taskTTL": how long a task is kept from its creation.
	TTL time.Duration
	// Max is "mcpx.maxTasks": how many tasks mcpx holds at once.
	Max int
}

// Server is one upstream server and how mcpx fronts it.
type Server struct {
	// Name is the server's key in "mcpServers": its namespace, also the
	// host of its resources' mcpx://<name>/ URIs. It matches
	// ^[a-zA-Z0-9_-]{1,64}$.
	Name string

	// Command is the program a local server runs as; "" for a remote
	// server. It speaks MCP over its standard input and output.
	Command string
	// Args are the program's arguments, as written.
	Args []string
	// Env holds variables added to mcpx's environment for the process,
	// ${VAR} already expanded. Nil when the file has none.
	Env map[string]string
	// Cwd is the process's working directory; "" means mcpx's own. [Load]
	// makes a relative path absolute, relative to the config file's
	// directory; [Parse] leaves it as written.
	Cwd string

	// URL is a remote server's MCP endpoint, ${VAR} expanded; "" for a
	// local server.
	URL string
	// Headers are sent with every request to URL, ${VAR} expanded.
	Headers map[string]string
	// OAuth, when set, is how mcpx gets its own token for a remote
	// server ("mcpx.oauth"), every value ${VAR} expanded.
	OAuth *OAuth
	// Transport is "stdio" for a local server, "http" (Streamable HTTP) or
	// "sse" (the 2024-11-05 HTTP+SSE transport, URL its event stream) for a
	// remote one: VS Code's "type", else "stdio" for a command and "http"
	// for a url.
	Transport string

	// Prefix goes before the server's tool and prompt names: "mcpx.prefix",
	// default Name+"__". "" for none, and always "" for the root.
	Prefix string
	// Include, when not nil, lists the only upstream tools offered
	// ("mcpx.includeTools"); names as the upstream has them, unprefixed.
	Include []string
	// Exclude lists upstream tools not offered ("mcpx.excludeTools").
	// At most one of Include and Exclude is set.
	Exclude []string
	// Timeout bounds each request to the server ("mcpx.timeout");
	// [DefaultTimeout] when not set. Always positive.
	Timeout time.Duration
	// MaxInFlight bounds the requests waiting on the server at once
	// ("mcpx.maxInFlight"); 0 when not set, for the upstream's default.
	MaxInFlight int
	// Eager is "mcpx.start": "eager": start or connect when mcpx starts
	// rather than when a client first contacts the gateway ("lazy", the
	// default; see the schema's description of "start").
	Eager bool
	// PerClient is "mcpx.session": "per-client": each legacy client
	// session gets an upstream session of its own (see the schema's
	// description of "session"); false is "shared", the default.
	PerClient bool
	// PerClientMax ("mcpx.perClientMax") bounds the client sessions with
	// their own upstream session at once, and PerClientIdle
	// ("mcpx.perClientIdle") closes one unused that long; 0 when not set,
	// for the gateway's defaults (64, 10m).
	PerClientMax  int
	PerClientIdle time.Duration
	// Root is "mcpx.root": the server is served transparently, its tools
	// and prompts keeping their names and its resource URIs passing
	// through. At most one server is the root.
	Root bool
	// Setup is "mcpx.setup": what to install or run so that the server
	// can start, said with the reason when it cannot.
	Setup string
	// Lazy is "mcpx.expose": "lazy": the server's tools are left out of
	// tools/list, found and called through mcpx's discovery tools.
	Lazy bool
	// CacheTTLMs and CacheScope are "mcpx.cache": the caching hints of the
	// server's lists and reads where its own answers give none; nil and ""
	// when not set (see the schema's description of "cache").
	CacheTTLMs *int64
	CacheScope string
}

// Error is every problem found in a configuration file.
type Error struct {
	File     string
	Problems []Problem
}

// Problem is one thing wrong with a configuration file.
type Problem struct {
	// Path is the JSON pointer of the value at fault, such as
	// /mcpServers/db/mcpx/start; "" for the file as a whole.
	Path string
	// Message says what was expected.
	Message string
}

// Error returns one line per problem: "FILE: PATH: MESSAGE".
func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.File)
		b.WriteString(": ")
		if p.Path != "" {
			b.WriteString(p.Path)
			b.WriteString(": ")
		}
		b.WriteString(p.Message)
	}
	return b.String()
}

// Load reads and parses the file at path with variables from the process
// environment, and makes each relative Cwd relative to the file's
// directory. Messages name the file as path.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	f.Close()
	if err != nil {
		return nil, err
	}
	c, err := Parse(path, data, os.LookupEnv)
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	for i := range c.Servers {
		if s := &c.Servers[i]; s.Cwd != "" && !filepath.IsAbs(s.Cwd) {
			s.Cwd = filepath.Join(dir, s.Cwd)
		}
	}
	for i := range c.OpenAPI {
		if d := &c.OpenAPI[i].Document; !strings.Contains(*d, "://") && !filepath.IsAbs(*d) {
			*d = filepath.Join(dir, *d)
		}
	}
	for i := range c.Commands {
		for j := range c.Commands[i].Tools {
			if d := &c.Commands[i].Tools[j].Cwd; *d != "" && !filepath.IsAbs(*d) {
				*d = filepath.Join(dir, *d)
			}
		}
	}
	return c, nil
}

// Parse parses a configuration file's contents. name is the file's name for
// messages; getenv looks variables up for ${VAR} (nil: os.LookupEnv).
// Any error is an [*Error] listing every problem found.
func Parse(name string, data []byte, getenv func(string) (string, bool)) (*Config, error) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	p := &parser{file: name, getenv: getenv, offsets: map[string]int{}}
	return p.parse(data)
}

// Schema returns the JSON Schema (draft 2020-12) the file is checked
// against. Editors can use it for completion ("$schema").
func Schema() []byte { return bytes.Clone(schemaJSON) }

//go:embed schema.json
var schemaJSON []byte

// raw is a server entry as the file has it.
type raw struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Cwd     string            `json:"cwd"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	MCPX    struct {
		Prefix      *string  `json:"prefix"`
		Include     []string `json:"includeTools"`
		Exclude     []string `json:"excludeTools"`
		Timeout     string   `json:"timeout"`
		MaxInFlight int      `json:"maxInFlight"`
		Start       string   `json:"start"`
		Root        bool     `json:"root"`
		Setup       string   `json:"setup"`
		// "session" and its limits (see Server.PerClient).
		Session       string `json:"session"`
		PerClientMax  int    `json:"perClientMax"`
		PerClientIdle string `json:"perClientIdle"`
		OAuth         *OAuth `json:"oauth"`
		Expose        string `json:"expose"`
		Cache         struct {
			TTLMs *int64 `json:"ttlMs"`
			Scope string `json:"scope"`
		} `json:"cache"`
	} `json:"mcpx"`
}

type parser struct {
	file     string
	getenv   func(string) (string, bool)
	offsets  map[string]int // JSON pointer -> byte offset in the file
	problems []Problem
}

func (p *parser) add(path, format string, args ...any) {
	p.problems = append(p.problems, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// fail returns the problems, in document order, as an *Error.
func (p *parser) fail() error {
	off := func(path string) int {
		// The nearest enclosing value the file has.
		for {
			if o, ok := p.offsets[path]; ok {
				return o
			}
			i := strings.LastIndexByte(path, '/')
			if i < 0 {
				return -1
			}
			path = path[:i]
		}
	}
	sort.SliceStable(p.problems, func(i, j int) bool {
		a, b := p.problems[i], p.problems[j]
		if oa, ob := off(a.Path), off(b.Path); oa != ob {
			return oa < ob
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Message < b.Message
	})
	return &Error{File: p.file, Problems: p.problems}
}

func (p *parser) parse(data []byte) (*Config, error) {
	if len(data) > MaxFileSize {
		p.add("", "the file is larger than %d bytes (4 MiB), the most a configuration may be", MaxFileSize)
		return nil, p.fail()
	}
	if off, ok := depthOK(data); !ok {
		p.add("", "objects and arrays nest more than %d deep (line %d); a configuration needs 5", MaxDepth, 1+bytes.Count(data[:off], []byte("\n")))
		return nil, p.fail()
	}
	v, err := hujson.Parse(data)
	if err != nil {
		p.add("", "%s", strings.TrimPrefix(err.Error(), "hujson: "))
		return nil, p.fail()
	}
	p.walk("", &v)
	if len(p.problems) > 0 { // duplicate keys
		return nil, p.fail()
	}
	v.Standardize()
	std := v.Pack()

	var doc any
	if err := json.Unmarshal(std, &doc); err != nil {
		p.add("", "%v", err)
		return nil, p.fail()
	}
	p.validate(doc)
	if len(p.problems) > 0 {
		return nil, p.fail()
	}

	var file struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Servers    map[string]json.RawMessage `json:"servers"`
		MCPX       struct {
			StateKey    *string                  `json:"stateKey"`
			ParkTimeout string                   `json:"parkTimeout"`
			MaxParked   int                      `json:"maxParked"`
			Auth        *rawAuth                 `json:"auth"`
			Access      []rawRule                `json:"access"`
			Store       string                   `json:"store"`
			Discovery   bool                     `json:"discovery"`
			APITools    bool                     `json:"apiTools"`
			OpenAPI     map[string]rawOpenAPI    `json:"openapi"`
			Commands    map[string]rawCommandSet `json:"commands"`
			TaskEager   string                   `json:"taskEager"`
			TaskAfter   string                   `json:"taskAfter"`
			TaskTTL     string                   `json:"taskTTL"`
			MaxTasks    int                      `json:"maxTasks"`
		} `json:"mcpx"`
	}
	if err := json.Unmarshal(std, &file); err != nil {
		p.add("", "%v", err) // the schema should have caught it
		return nil, p.fail()
	}
	key, entries := "mcpServers", file.MCPServers
	if entries == nil {
		key, entries = "servers", file.Servers
	}
	if len(entries) > MaxServers {
		p.add("/"+key, "has %d servers; at most %d are allowed", len(entries), MaxServers)
		return nil, p.fail()
	}
	c := &Config{Servers: make([]Server, 0, len(entries))}
	if k := file.MCPX.StateKey; k != nil {
		// Said here rather than at the first request that needs it.
		if _, err := requeststate.ParseKeys(*k); err != nil {
			p.add("/mcpx/stateKey", "%v", err)
		}
		c.StateKey = *k
	}
	if t := file.MCPX.ParkTimeout; t != "" {
		d, err := time.ParseDuration(t)
		switch {
		case err != nil:
			p.add("/mcpx/parkTimeout", "must be a duration such as \"5m\", \"1m30s\" or \"500ms\"")
		case d <= 0:
			p.add("/mcpx/parkTimeout", "must be more than zero")
		default:
			c.ParkTimeout = d
		}
	}
	c.MaxParked = file.MCPX.MaxParked
	for _, d := range []struct {
		key, value string
		into       *time.Duration
	}{
		{"taskEager", file.MCPX.TaskEager, &c.Tasks.Eager},
		{"taskAfter", file.MCPX.TaskAfter, &c.Tasks.After},
		{"taskTTL", file.MCPX.TaskTTL, &c.Tasks.TTL},
	} {
		if d.value == "" {
			continue
		}
		v, err := time.ParseDuration(d.value)
		switch {
		case err != nil:
			p.add("/mcpx/"+d.key, "must be a duration such as \"250ms\", \"10s\" or \"1h\"")
		case v <= 0:
			p.add("/mcpx/"+d.key, "must be more than zero")
		default:
			*d.into = v
		}
	}
	c.Tasks.Max = file.MCPX.MaxTasks
	for name, msg := range entries {
		var r raw
		if err := json.Unmarshal(msg, &r); err != nil {
			p.add("/"+key+"/"+escape(name), "%v", err)
			continue
		}
		c.Servers = append(c.Servers, p.server("/"+key+"/"+escape(name), name, &r))
	}
	sort.Slice(c.Servers, func(i, j int) bool { return c.Servers[i].Name < c.Servers[j].Name })
	p.across(key, c.Servers)
	c.Auth = p.auth(file.MCPX.Auth)
	c.Access = p.access(file.MCPX.Access, c.Auth != nil, c.Servers)
	p.contributed(c, file.MCPX.OpenAPI, file.MCPX.Commands)
	c.Discovery, c.APITools = file.MCPX.Discovery, file.MCPX.APITools
	if file.MCPX.Store != "" {
		c.Store = p.expand("/mcpx/store", "", file.MCPX.Store)
	}
	if len(p.problems) > 0 {
		return nil, p.fail()
	}
	return c, nil
}

// depthOK scans data as HuJSON (strings, // and /* */ comments) and
// reports whether objects and arrays nest at most MaxDepth deep; if not,
// off is the offset of the bracket that goes deeper. It builds nothing: a
// file nested far too deep costs one pass over its bytes. Malformed input
// is left to the parser.
func depthOK(data []byte) (off int, ok bool) {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '/':
			switch {
			case i+1 < len(data) && data[i+1] == '/':
				for i < len(data) && data[i] != '\n' {
					i++
				}
			case i+1 < len(data) && data[i+1] == '*':
				end := bytes.Index(data[i+2:], []byte("*/"))
				if end < 0 {
					return 0, true
				}
				i += 2 + end + 1
			}
		case '{', '[':
			if depth++; depth > MaxDepth {
				return i, false
			}
		case '}', ']':
			depth--
		}
	}
	return 0, true
}

// walk records every value's offset and reports duplicate keys.
func (p *parser) walk(path string, v *hujson.Value) {
	p.offsets[path] = v.StartOffset
	switch t := v.Value.(type) {
	case *hujson.Object:
		seen := map[string]bool{}
		for i := range t.Members {
			m := &t.Members[i]
			name := m.Name.Value.(hujson.Literal).String()
			child := path + "/" + escape(name)
			if seen[name] {
				p.add(child, "duplicate key %q", name)
			}
			seen[name] = true
			if _, ok := p.offsets[child]; !ok {
				p.walk(child, &m.Value)
			}
		}
	case *hujson.Array:
		for i := range t.Elements {
			p.walk(fmt.Sprintf("%s/%d", path, i), &t.Elements[i])
		}
	}
}

// server turns a validated entry into a Server.
func (p *parser) server(path, name string, r *raw) Server {
	s := Server{
		Name:        name,
		Command:     r.Command,
		Args:        r.Args,
		Cwd:         r.Cwd,
		Include:     r.MCPX.Include,
		Exclude:     r.MCPX.Exclude,
		Timeout:     DefaultTimeout,
		MaxInFlight: r.MCPX.MaxInFlight,
		Eager:       r.MCPX.Start == "eager",
		Root:        r.MCPX.Root,
		Setup:       r.MCPX.Setup,
	}
	s.PerClient, s.PerClientMax = r.MCPX.Session == "per-client", r.MCPX.PerClientMax
	s.OAuth = p.oauth(path+"/mcpx/oauth", name, r)
	s.Lazy = r.MCPX.Expose == "lazy"
	s.CacheTTLMs, s.CacheScope = r.MCPX.Cache.TTLMs, r.MCPX.Cache.Scope
	s.Env = p.expandMap(path+"/env", name, r.Env)
	s.Headers = p.expandMap(path+"/headers", name, r.Headers)
	if r.URL != "" {
		s.URL = p.expand(path+"/url", name, r.URL)
	}

	switch {
	case r.Command != "" && r.Type != "" && r.Type != "stdio":
		p.add(path+"/type", "must be \"stdio\" for a server with \"command\"")
	case r.URL != "" && r.Type == "stdio":
		p.add(path+"/type", "must be \"http\" or \"sse\" for a server with \"url\"")
	}
	switch {
	case r.Type != "":
		s.Transport = r.Type
	case r.Command != "":
		s.Transport = "stdio"
	default:
		s.Transport = "http"
	}

	switch {
	case r.MCPX.Root && r.MCPX.Prefix != nil && *r.MCPX.Prefix != "":
		p.add(path+"/mcpx/prefix", "the root server's names are not prefixed; remove \"prefix\" or \"root\"")
	case r.MCPX.Root:
		s.Prefix = ""
	case r.MCPX.Prefix != nil:
		s.Prefix = *r.MCPX.Prefix
	default:
		s.Prefix = name + "__"
	}

	if r.MCPX.Timeout != "" {
		d, err := time.ParseDuration(r.MCPX.Timeout)
		switch {
		case err != nil:
			p.add(path+"/mcpx/timeout", "must be a duration such as \"30s\", \"1m30s\" or \"500ms\"")
		case d <= 0:
			p.add(path+"/mcpx/timeout", "must be more than zero")
		default:
			s.Timeout = d
		}
	}
	if r.MCPX.PerClientIdle != "" {
		d, err := time.ParseDuration(r.MCPX.PerClientIdle)
		switch {
		case err != nil:
			p.add(path+"/mcpx/perClientIdle", "must be a duration such as \"10m\", \"1h\" or \"90s\"")
		case d <= 0:
			p.add(path+"/mcpx/perClientIdle", "must be more than zero")
		default:
			s.PerClientIdle = d
		}
	}
	// A per-client limit on a shared server would silently mean nothing.
	if !s.PerClient && r.MCPX.PerClientMax != 0 {
		p.add(path+"/mcpx/perClientMax", "applies only with \"session\": \"per-client\"")
	}
	if !s.PerClient && r.MCPX.PerClientIdle != "" {
		p.add(path+"/mcpx/perClientIdle", "applies only with \"session\": \"per-client\"")
	}
	return s
}

// across checks what involves more than one server.
func (p *parser) across(key string, servers []Server) {
	root := ""
	prefixes := map[string]string{}
	for _, s := range servers {
		path := "/" + key + "/" + escape(s.Name)
		if s.Root {
			if root != "" {
				p.add(path+"/mcpx/root", "only one server may be the root; %q already is", root)
			} else {
				root = s.Name
			}
		}
		if s.Prefix == "" {
			continue
		}
		if other, ok := prefixes[s.Prefix]; ok {
			p.add(path+"/mcpx/prefix", "prefix %q is already %q's; tool names would clash", s.Prefix, other)
			continue
		}
		prefixes[s.Prefix] = s.Name
	}
}

func (p *parser) expandMap(path, server string, m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = p.expand(path+"/"+escape(k), server, v)
	}
	return out
}

var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// expand replaces ${VAR}, ${env:VAR} and ${VAR:-default} in s; $${ is a
// literal ${.
func (p *parser) expand(path, server, s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			p.add(path, "%q has no closing '}' (write $${ for a literal ${)", s[i:])
			return ""
		}
		expr := s[i+2 : i+end]
		s = s[i+end+1:]
		name, def, hasDef := strings.Cut(expr, ":-")
		name = strings.TrimPrefix(name, "env:")
		if !varName.MatchString(name) {
			p.add(path, "${%s}: only ${VAR}, ${env:VAR} and ${VAR:-default} are expanded", expr)
			continue
		}
		val, ok := p.getenv(name)
		switch {
		case hasDef && val == "":
			val = def
		case !ok && server == "":
			p.add(path, "environment variable %s is not set", name)
		case !ok:
			p.add(path, "server %q: environment variable %s is not set", server, name)
		}
		b.WriteString(val)
	}
}

// escape escapes a key for a JSON pointer (RFC 6901).
func escape(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

var errNoSchema = errors.New("config: embedded schema does not compile")
