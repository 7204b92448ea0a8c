package config

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// OpenAPISource is one entry of "mcpx.openapi": a document whose
// operations become the tools of a namespace (package openapi).
type OpenAPISource struct {
	// Namespace is the entry's key: its tools are "<namespace>__<name>".
	Namespace string
	// Document is a file (made absolute by [Load], relative to the config
	// file's directory) or an http(s) URL.
	Document string
	// BaseURL is where the paths go, ${VAR} expanded; "" means the
	// document's first server.
	BaseURL string
	// Headers are sent with every call, ${VAR} expanded.
	Headers map[string]string
	// Timeout bounds one call; always positive.
	Timeout time.Duration
	// MaxResponse bounds a response body in bytes; 0 means the default.
	MaxResponse int64
	// Lazy is "expose": "lazy" (see Server.Lazy).
	Lazy bool
}

// CommandSet is one entry of "mcpx.commands": the command tools of a
// namespace (package command), sorted by name.
type CommandSet struct {
	Namespace string
	Tools     []CommandTool
}

// CommandTool is a tool that runs a program.
type CommandTool struct {
	Name        string
	Description string
	Command     string
	// Args are the arguments as written, "{input}" placeholders and all.
	Args []string
	// InputSchema is the tool's inputSchema as written; nil for none.
	InputSchema json.RawMessage
	Timeout     time.Duration
	// Cwd is made absolute by [Load], relative to the config file's
	// directory; "" is mcpx's own.
	Cwd       string
	Env       map[string]string
	MaxOutput int64
}

type rawOpenAPI struct {
	Document    string            `json:"document"`
	BaseURL     string            `json:"baseUrl"`
	Headers     map[string]string `json:"headers"`
	Timeout     string            `json:"timeout"`
	MaxResponse int64             `json:"maxResponse"`
	Expose      string            `json:"expose"`
}

type rawCommandSet struct {
	Tools map[string]struct {
		Description string            `json:"description"`
		Command     string            `json:"command"`
		Args        []string          `json:"args"`
		InputSchema json.RawMessage   `json:"inputSchema"`
		Timeout     string            `json:"timeout"`
		Cwd         string            `json:"cwd"`
		Env         map[string]string `json:"env"`
		MaxOutput   int64             `json:"maxOutput"`
	} `json:"tools"`
}

// defaultContribTimeout is an OpenAPI call's and a command run's limit
// when the file gives none.
const defaultContribTimeout = 30 * time.Second

func (p *parser) duration(path, s string) time.Duration {
	if s == "" {
		return defaultContribTimeout
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		p.add(path, "must be a duration more than zero, such as \"30s\"")
		return defaultContribTimeout
	}
	return d
}

// contributed reads "mcpx.openapi" and "mcpx.commands"; a namespace may be
// named once among them and the servers.
func (p *parser) contributed(c *Config, oa map[string]rawOpenAPI, cmds map[string]rawCommandSet) {
	taken := map[string]string{}
	for _, s := range c.Servers {
		taken[s.Name] = "a server"
	}
	claim := func(path, ns, what string) bool {
		if by, ok := taken[ns]; ok {
			p.add(path, "%q is already %s's namespace", ns, by)
			return false
		}
		taken[ns] = what
		return true
	}
	for _, ns := range sortedKeys(oa) {
		r := oa[ns]
		path := "/mcpx/openapi/" + escape(ns)
		if !claim(path, ns, "an openapi source") {
			continue
		}
		src := OpenAPISource{
			Namespace:   ns,
			Document:    r.Document,
			Headers:     p.expandMap(path+"/headers", ns, r.Headers),
			Timeout:     p.duration(path+"/timeout", r.Timeout),
			MaxResponse: r.MaxResponse,
			Lazy:        r.Expose == "lazy",
		}
		if r.BaseURL != "" {
			src.BaseURL = p.expand(path+"/baseUrl", ns, r.BaseURL)
		}
		c.OpenAPI = append(c.OpenAPI, src)
	}
	for _, ns := range sortedKeys(cmds) {
		path := "/mcpx/commands/" + escape(ns)
		if !claim(path, ns, "a command set") {
			continue
		}
		set := CommandSet{Namespace: ns}
		for _, name := range sortedKeys(cmds[ns].Tools) {
			t := cmds[ns].Tools[name]
			tp := path + "/tools/" + escape(name)
			ct := CommandTool{
				Name: name, Description: t.Description, Command: t.Command, Args: t.Args,
				InputSchema: t.InputSchema, Timeout: p.duration(tp+"/timeout", t.Timeout),
				Cwd: t.Cwd, Env: p.expandMap(tp+"/env", ns, t.Env), MaxOutput: t.MaxOutput,
			}
			p.placeholders(tp, ct)
			set.Tools = append(set.Tools, ct)
		}
		c.Commands = append(c.Commands, set)
	}
}

// placeholders checks that every "{name}" of a tool's args is an input
// its schema declares, so a typo is found at startup, not at a call.
func (p *parser) placeholders(path string, t CommandTool) {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(t.InputSchema, &schema)
	for i, a := range t.Args {
		for rest := a; ; {
			open := strings.IndexByte(rest, '{')
			if open < 0 {
				break
			}
			end := strings.IndexByte(rest[open:], '}')
			if end < 0 {
				break
			}
			name := rest[open+1 : open+end]
			if _, ok := schema.Properties[name]; !ok {
				p.add(fmt.Sprintf("%s/args/%d", path, i), "{%s} names no property of the tool's inputSchema", name)
			}
			rest = rest[open+end+1:]
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
