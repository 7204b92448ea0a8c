// Package discovery gives a model a way to find tools instead of reading
// every schema up front: three tools, mcpx_search (tools ranked by BM25
// over their names and descriptions), mcpx_describe (one tool's full
// definition) and mcpx_call (call any tool by name). With a server's
// "expose": "lazy" its tools stay out of tools/list and are reached
// through these, so a client of any revision can start small.
package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Tools is what discovery searches and calls: the gateway.
type Tools interface {
	// AllTools lists every tool by the name clients call it by, hidden
	// ones too.
	AllTools(ctx context.Context) ([]mcp.Tool, error)
	CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error)
	server.Versioned
}

// The names of the discovery tools.
const (
	Search   = "mcpx_search"
	Describe = "mcpx_describe"
	Call     = "mcpx_call"
)

// Limits of mcpx_search.
const (
	DefaultLimit = 10
	MaxLimit     = 50
	// summaryLen bounds the one-line description a search returns.
	summaryLen = 160
)

// Catalog returns the three tools over t, for gateway.AddFixed.
func Catalog(t Tools) *catalog.Catalog {
	d := &discovery{tools: t}
	c := catalog.New()
	ro := &mcp.ToolAnnotations{ReadOnlyHint: mcp.Ptr(true), IdempotentHint: mcp.Ptr(true), OpenWorldHint: mcp.Ptr(false)}
	c.AddTool(mcp.Tool{
		Name:  Search,
		Title: "Search tools",
		Description: "Find tools across every server by words in their names and descriptions. " +
			"Returns the best matches, each with its name and a one-line description; " +
			"read one in full with " + Describe + ", call it with " + Call + " (or by its name).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","minLength":1,"description":"Words to look for, such as \"read file\"."},` +
			`"limit":{"type":"integer","minimum":1,"maximum":50,"description":"How many tools at most (default 10)."}},` +
			`"required":["query"],"additionalProperties":false}`),
		Annotations: ro,
	}, catalog.Typed(d.search))
	c.AddTool(mcp.Tool{
		Name:        Describe,
		Title:       "Describe a tool",
		Description: "The full definition of one tool (its description and input schema), by the name " + Search + " gave.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"],"additionalProperties":false}`),
		Annotations: ro,
	}, catalog.Typed(d.describe))
	c.AddTool(mcp.Tool{
		Name:  Call,
		Title: "Call a tool",
		Description: "Call any tool by name with its arguments, exactly as calling it directly: " +
			"the same checks, timeouts and errors.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1},` +
			`"arguments":{"type":"object","description":"The tool's arguments, as its input schema says."}},` +
			`"required":["name"],"additionalProperties":false}`),
	}, d.call)
	return c
}

type discovery struct {
	tools Tools

	mu      sync.Mutex
	version uint64
	index   *index
}

// current is the index of the tools as they are now, rebuilt when the
// gateway's lists changed.
func (d *discovery) current(ctx context.Context) (*index, error) {
	v := d.tools.Version()
	d.mu.Lock()
	if d.index != nil && d.version == v {
		ix := d.index
		d.mu.Unlock()
		return ix, nil
	}
	d.mu.Unlock()
	all, err := d.tools.AllTools(ctx)
	if err != nil {
		return nil, err
	}
	ix := newIndex(all)
	d.mu.Lock()
	d.index, d.version = ix, v
	d.mu.Unlock()
	return ix, nil
}

type searchIn struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

// Found is one match of a search.
type Found struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`
}

func (d *discovery) search(ctx context.Context, in searchIn) (*mcp.CallToolResult, error) {
	ix, err := d.current(ctx)
	if err != nil {
		return nil, err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	found := ix.search(in.Query, limit)
	var b strings.Builder
	if len(found) == 0 {
		fmt.Fprintf(&b, "No tool matches %q; try other words.", in.Query)
	}
	for _, f := range found {
		fmt.Fprintf(&b, "%s: %s\n", f.Name, f.Description)
	}
	r := catalog.TextResult(strings.TrimSpace(b.String()))
	r.StructuredContent, _ = json.Marshal(map[string]any{"tools": found})
	return r, nil
}

type describeIn struct {
	Name string `json:"name"`
}

func (d *discovery) describe(ctx context.Context, in describeIn) (*mcp.CallToolResult, error) {
	ix, err := d.current(ctx)
	if err != nil {
		return nil, err
	}
	t, ok := ix.byName[in.Name]
	if !ok {
		return catalog.ErrorResult("no tool is named %q; find one with %s", in.Name, Search), nil
	}
	raw, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return nil, err
	}
	return catalog.TextResult(string(raw)), nil
}

func (d *discovery) call(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
	var in struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return catalog.ErrorResult("the arguments are not an object: %v", err), nil
	}
	switch in.Name {
	case Search, Describe, Call:
		return catalog.ErrorResult("%s calls the servers' tools; call %s directly", Call, in.Name), nil
	}
	return d.tools.CallTool(ctx, &mcp.CallToolRequestParams{Name: in.Name, Arguments: in.Arguments})
}

// index is BM25 over the tools' words.
type index struct {
	docs   []doc
	byName map[string]mcp.Tool
	df     map[string]int // documents holding a term
	avgLen float64
}

type doc struct {
	name, summary string
	tf            map[string]float64
	len           float64
}

// BM25's usual constants.
const (
	k1 = 1.2
	b  = 0.75
	// nameWeight counts a word of the name as this many of the
	// description: names are short and say most.
	nameWeight = 3
)

func newIndex(tools []mcp.Tool) *index {
	ix := &index{byName: make(map[string]mcp.Tool, len(tools)), df: map[string]int{}}
	total := 0.0
	for _, t := range tools {
		ix.byName[t.Name] = t
		d := doc{name: t.Name, summary: summary(t), tf: map[string]float64{}}
		for _, w := range words(t.Name) {
			d.tf[w] += nameWeight
			d.len += nameWeight
		}
		for _, w := range words(t.Title + " " + t.Description) {
			d.tf[w]++
			d.len++
		}
		for w := range d.tf {
			ix.df[w]++
		}
		total += d.len
		ix.docs = append(ix.docs, d)
	}
	if len(ix.docs) > 0 {
		ix.avgLen = total / float64(len(ix.docs))
	}
	return ix
}

func (ix *index) search(query string, limit int) []Found {
	terms := words(query)
	n := float64(len(ix.docs))
	var out []Found
	for _, d := range ix.docs {
		score := 0.0
		for _, q := range terms {
			tf := d.tf[q]
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(ix.df[q])+0.5)/(float64(ix.df[q])+0.5))
			score += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*d.len/ix.avgLen))
		}
		if score > 0 {
			out = append(out, Found{Name: d.name, Description: d.summary, Score: math.Round(score*1000) / 1000})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// words splits text into lower-case words, names too: read_file,
// readFile and "Read a file" all give "read" and "file".
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 1 || len(cur) == 1 && unicode.IsDigit(cur[0]) {
			out = append(out, strings.ToLower(string(cur)))
		}
		cur = cur[:0]
	}
	prev := rune(0)
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

// summary is a tool's description cut to its first line or sentence.
func summary(t mcp.Tool) string {
	s := strings.TrimSpace(t.Description)
	if s == "" {
		s = t.Title
	}
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if r := []rune(s); len(r) > summaryLen {
		s = strings.TrimSpace(string(r[:summaryLen])) + "…"
	}
	return s
}
