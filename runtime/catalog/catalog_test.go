package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

func noop(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
	return TextResult("ok"), nil
}

func TestCapabilities(t *testing.T) {
	tests := []struct {
		name  string
		build func(c *Catalog)
		want  string
	}{
		{"an empty catalog declares nothing", func(c *Catalog) {}, `{}`},
		{"a tool declares tools without listChanged", func(c *Catalog) {
			c.AddTool(mcp.Tool{Name: "t"}, noop)
		}, `{"tools":{"listChanged":false}}`},
		{"a resource declares resources", func(c *Catalog) {
			c.AddResource(mcp.Resource{URI: "x://a", Name: "a"}, Static(Text("x://a", "", "a")))
		}, `{"resources":{"listChanged":false}}`},
		{"a template alone declares resources", func(c *Catalog) {
			c.AddTemplate(mcp.ResourceTemplate{URITemplate: "x://{id}", Name: "x"}, nil2)
		}, `{"resources":{"listChanged":false}}`},
		{"subscribable resources declare subscribe", func(c *Catalog) {
			c.AddResource(mcp.Resource{URI: "x://a", Name: "a"}, Static(Text("x://a", "", "a")))
			c.Subscribable(true)
		}, `{"resources":{"listChanged":false,"subscribe":true}}`},
		{"subscribable without resources declares nothing", func(c *Catalog) {
			c.Subscribable(true)
		}, `{}`},
		{"a prompt declares prompts", func(c *Catalog) {
			c.AddPrompt(mcp.Prompt{Name: "p"}, func(context.Context, map[string]string) (*mcp.GetPromptResult, error) { return nil, nil })
		}, `{"prompts":{"listChanged":false}}`},
		{"completion and logging are declared only when set", func(c *Catalog) {
			c.SetCompletion(func(context.Context, *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) { return nil, nil })
			c.SetLogging(true)
		}, `{"completions":{},"logging":{}}`},
		{"logging switched off again is not declared", func(c *Catalog) {
			c.SetLogging(true)
			c.SetLogging(false)
		}, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New()
			tt.build(c)
			got, err := json.Marshal(c.Capabilities())
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Capabilities() = %s, want %s", got, tt.want)
			}
		})
	}
}

func nil2(context.Context, string, map[string]string) ([]mcp.ReadResourceResultContentsItem, error) {
	return nil, nil
}

func TestEmptyCatalogIsUnsupported(t *testing.T) {
	c := New()
	ctx := context.Background()
	calls := map[string]func() error{
		"ListTools":             func() error { _, err := c.ListTools(ctx); return err },
		"CallTool":              func() error { _, err := c.CallTool(ctx, &mcp.CallToolRequestParams{Name: "x"}); return err },
		"ListResources":         func() error { _, err := c.ListResources(ctx); return err },
		"ListResourceTemplates": func() error { _, err := c.ListResourceTemplates(ctx); return err },
		"ReadResource":          func() error { _, err := c.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: "x://"}); return err },
		"ListPrompts":           func() error { _, err := c.ListPrompts(ctx); return err },
		"GetPrompt":             func() error { _, err := c.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: "x"}); return err },
		"Complete": func() error {
			_, err := c.Complete(ctx, &mcp.CompleteRequestParams{Ref: mcp.CompleteRequestParamsRef{Value: &mcp.PromptReference{Name: "x"}}})
			return err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			if err := call(); !errors.Is(err, server.ErrUnsupported) {
				t.Errorf("%s on an empty catalog = %v, want ErrUnsupported", name, err)
			}
		})
	}
}

func TestListsKeepInsertionOrder(t *testing.T) {
	c := New()
	names := []string{"zeta", "alpha", "mid", "beta"}
	for _, n := range names {
		c.AddTool(mcp.Tool{Name: n}, noop)
		c.AddResource(mcp.Resource{URI: "x://" + n, Name: n}, Static(Text("x://"+n, "", n)))
		c.AddPrompt(mcp.Prompt{Name: n}, func(context.Context, map[string]string) (*mcp.GetPromptResult, error) { return nil, nil })
		c.AddTemplate(mcp.ResourceTemplate{URITemplate: "y://" + n + "/{id}", Name: n}, nil2)
	}
	ctx := context.Background()
	tools, _ := c.ListTools(ctx)
	res, _ := c.ListResources(ctx)
	prompts, _ := c.ListPrompts(ctx)
	temps, _ := c.ListResourceTemplates(ctx)
	for i, n := range names {
		if tools[i].Name != n || res[i].Name != n || prompts[i].Name != n || temps[i].Name != n {
			t.Fatalf("item %d: tool %q, resource %q, prompt %q, template %q; want all %q",
				i, tools[i].Name, res[i].Name, prompts[i].Name, temps[i].Name, n)
		}
	}
	if got := string(tools[0].InputSchema); got != `{"type":"object"}` {
		t.Errorf("a tool added without inputSchema lists %s, want {\"type\":\"object\"}", got)
	}
}

func TestCallTool(t *testing.T) {
	var seen json.RawMessage
	echo := func(_ context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
		seen = args
		return TextResult("ran"), nil
	}
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}},"required":["n"],"additionalProperties":false}`)
	tests := []struct {
		name      string
		tool      string
		handler   ToolHandler
		args      string
		wantErr   error  // protocol error, matched with errors.Is
		wantIsErr bool   // tool result with isError
		wantText  string // substring of the first text block
		wantArgs  string // what the handler saw, when it ran
		rejected  bool   // the arguments never reach the handler
	}{
		{name: "valid arguments reach the handler", tool: "num", handler: echo, args: `{"n":1}`, wantText: "ran", wantArgs: `{"n":1}`},
		{name: "absent arguments become an empty object", tool: "free", handler: echo, args: ``, wantText: "ran", wantArgs: `{}`},
		{name: "null arguments become an empty object", tool: "free", handler: echo, args: `null`, wantText: "ran", wantArgs: `{}`},
		{name: "an array is a tool error, not a protocol error", tool: "free", handler: echo, args: `[1]`, wantIsErr: true, wantText: "must be a JSON object, got an array", rejected: true},
		{name: "a string is a tool error", tool: "free", handler: echo, args: `"x"`, wantIsErr: true, wantText: "got a string", rejected: true},
		{name: "a missing required property is a tool error", tool: "num", handler: echo, args: `{}`, wantIsErr: true, wantText: `invalid arguments for tool "num"`, rejected: true},
		{name: "a wrong type names the property", tool: "num", handler: echo, args: `{"n":"one"}`, wantIsErr: true, wantText: "/n:", rejected: true},
		{name: "an undeclared property is rejected", tool: "num", handler: echo, args: `{"n":1,"m":2}`, wantIsErr: true, wantText: "m", rejected: true},
		{name: "an unknown tool is ErrUnknownTool", tool: "nope", wantErr: server.ErrUnknownTool},
		{name: "a handler error becomes a tool error", tool: "free", handler: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return nil, errors.New("disk on fire")
		}, wantIsErr: true, wantText: "disk on fire"},
		{name: "a server error from a handler stays a protocol error", tool: "free", handler: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return nil, fmt.Errorf("lookup: %w", server.ErrUnknownPrompt)
		}, wantErr: server.ErrUnknownPrompt},
		{name: "a result without content gets an empty content list", tool: "free", handler: func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen = nil
			c := New()
			h := tt.handler
			if h == nil {
				h = noop
			}
			c.AddTool(mcp.Tool{Name: "num", InputSchema: schema}, h)
			c.AddTool(mcp.Tool{Name: "free"}, h)
			res, err := c.CallTool(context.Background(), &mcp.CallToolRequestParams{Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("CallTool(%s) error = %v, want %v", tt.tool, err, tt.wantErr)
				}
				if errors.Is(err, server.ErrUnknownTool) && !strings.Contains(err.Error(), tt.tool) {
					t.Errorf("error %q does not name the tool", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CallTool(%s) = %v, want a result", tt.tool, err)
			}
			if got := res.IsError != nil && *res.IsError; got != tt.wantIsErr {
				t.Errorf("isError = %v, want %v (result %+v)", got, tt.wantIsErr, res)
			}
			if res.Content == nil {
				t.Errorf("content is nil; it must encode as []")
			}
			if tt.wantText != "" && !strings.Contains(firstText(res), tt.wantText) {
				t.Errorf("text = %q, want it to contain %q", firstText(res), tt.wantText)
			}
			if tt.wantArgs != "" && string(seen) != tt.wantArgs {
				t.Errorf("handler saw %s, want %s", seen, tt.wantArgs)
			}
			if tt.rejected && seen != nil {
				t.Errorf("handler ran on rejected arguments %s", seen)
			}
		})
	}
}

func TestCallToolCancelled(t *testing.T) {
	c := New()
	c.AddTool(mcp.Tool{Name: "wait"}, func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.CallTool(ctx, &mcp.CallToolRequestParams{Name: "wait"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled call = %v, want a protocol error wrapping context.Canceled", err)
	}
}

func firstText(r *mcp.CallToolResult) string {
	for _, b := range r.Content {
		if tc, ok := b.Value.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

func TestReadResource(t *testing.T) {
	c := New()
	c.AddResource(mcp.Resource{URI: "notes://fixed", Name: "fixed"}, Static(Text("notes://fixed", "text/plain", "fixed wins")))
	c.AddResource(mcp.Resource{URI: "notes://gone", Name: "gone"}, Static())
	c.AddTemplate(mcp.ResourceTemplate{URITemplate: "notes://{id}", Name: "note"},
		func(_ context.Context, uri string, vars map[string]string) ([]mcp.ReadResourceResultContentsItem, error) {
			if vars["id"] == "missing" {
				return nil, nil
			}
			return []mcp.ReadResourceResultContentsItem{Text(uri, "text/plain", "note "+vars["id"])}, nil
		})
	c.AddTemplate(mcp.ResourceTemplate{URITemplate: "files://{dir}/{name}.txt", Name: "file"},
		func(_ context.Context, uri string, vars map[string]string) ([]mcp.ReadResourceResultContentsItem, error) {
			return []mcp.ReadResourceResultContentsItem{Text(uri, "text/plain", vars["dir"]+"|"+vars["name"])}, nil
		})
	tests := []struct {
		name     string
		uri      string
		wantText string
		notFound bool
	}{
		{"a fixed resource is read by its URI", "notes://fixed", "fixed wins", false},
		{"a template fills its variable", "notes://42", "note 42", false},
		{"template variables are percent-decoded", "notes://a%20b", "note a b", false},
		{"two variables split at the literal text", "files://docs/read.me.txt", "docs|read.me", false},
		{"a variable does not match across a slash", "notes://a/b", "", true},
		{"an empty variable does not match", "files:///x.txt", "", true},
		{"a template read with no contents is not found", "notes://missing", "", true},
		{"a fixed read with no contents is not found", "notes://gone", "", true},
		{"an unknown scheme is not found", "other://x", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.ReadResource(context.Background(), &mcp.ReadResourceRequestParams{URI: tt.uri})
			if tt.notFound {
				var nf *server.ResourceNotFoundError
				if !errors.As(err, &nf) || nf.URI != tt.uri {
					t.Fatalf("ReadResource(%q) = %v, %v; want ResourceNotFoundError{%q}", tt.uri, res, err, tt.uri)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadResource(%q) = %v", tt.uri, err)
			}
			got := res.Contents[0].Value.(*mcp.TextResourceContents)
			if got.Text != tt.wantText || got.URI != tt.uri {
				t.Errorf("ReadResource(%q) = %q at %q, want %q", tt.uri, got.Text, got.URI, tt.wantText)
			}
		})
	}
}

func TestGetPrompt(t *testing.T) {
	c := New()
	var seen map[string]string
	c.AddPrompt(mcp.Prompt{Name: "greet", Arguments: []mcp.PromptArgument{
		{Name: "name", Required: mcp.Ptr(true)},
		{Name: "tone"},
	}}, func(_ context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
		seen = args
		return &mcp.GetPromptResult{}, nil
	})
	tests := []struct {
		name    string
		prompt  string
		args    map[string]string
		wantErr string // substring; "" for success
		is      error
	}{
		{name: "required argument present", prompt: "greet", args: map[string]string{"name": "Ada"}},
		{name: "optional argument may be absent", prompt: "greet", args: map[string]string{"name": ""}},
		{name: "missing required argument is invalid params naming it", prompt: "greet", args: map[string]string{"tone": "warm"}, wantErr: `missing required argument "name"`},
		{name: "no arguments at all is invalid params", prompt: "greet", wantErr: `"name"`},
		{name: "unknown prompt is ErrUnknownPrompt", prompt: "nope", wantErr: `"nope"`, is: server.ErrUnknownPrompt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen = nil
			res, err := c.GetPrompt(context.Background(), &mcp.GetPromptRequestParams{Name: tt.prompt, Arguments: tt.args})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("GetPrompt = %v", err)
				}
				if res.Messages == nil || seen == nil {
					t.Errorf("messages %v, args seen %v; want both non-nil", res.Messages, seen)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("GetPrompt error = %v, want one containing %q", err, tt.wantErr)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			var ip *server.InvalidParamsError
			if tt.is == nil && !errors.As(err, &ip) {
				t.Errorf("error %T is not an InvalidParamsError", err)
			}
			if seen != nil {
				t.Errorf("prompt function ran on a rejected request")
			}
		})
	}
}

func TestComplete(t *testing.T) {
	c := New()
	c.AddPrompt(mcp.Prompt{Name: "p", Arguments: []mcp.PromptArgument{{Name: "a"}}},
		func(context.Context, map[string]string) (*mcp.GetPromptResult, error) { return nil, nil })
	c.AddTemplate(mcp.ResourceTemplate{URITemplate: "t://{id}", Name: "t"}, nil2)
	c.SetCompletion(func(_ context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
		switch p.Argument.Value {
		}
		return Suggest(p.Argument.Value, "apple", "Apricot", "banana"), nil
	})
	prompt := func(name string) mcp.CompleteRequestParamsRef {
		return mcp.CompleteRequestParamsRef{Value: &mcp.PromptReference{Name: name}}
	}
	tmpl := func(uri string) mcp.CompleteRequestParamsRef {
		return mcp.CompleteRequestParamsRef{Value: &mcp.ResourceTemplateReference{URI: uri}}
	}
	tests := []struct {
		name       string
		ref        mcp.CompleteRequestParamsRef
		value      string
		wantValues int
		wantFirst  string
		wantErr    bool
	}{
		{name: "a prompt argument is completed by prefix, ignoring case", ref: prompt("p"), value: "ap", wantValues: 2, wantFirst: "apple"},
		{name: "a template variable is completed", ref: tmpl("t://{id}"), value: "b", wantValues: 1, wantFirst: "banana"},
		{name: "no match is an empty list, not null", ref: prompt("p"), value: "zz", wantValues: 0},
		{name: "an unknown prompt is invalid params", ref: prompt("q"), wantErr: true},
		{name: "an unknown template is invalid params", ref: tmpl("t://{other}"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Complete(context.Background(), &mcp.CompleteRequestParams{
				Ref: tt.ref, Argument: mcp.CompleteRequestParamsArgument{Name: "a", Value: tt.value},
			})
			if tt.wantErr {
				var ip *server.InvalidParamsError
				if !errors.As(err, &ip) {
					t.Fatalf("Complete = %v, want InvalidParamsError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			v := res.Completion.Values
			if v == nil || len(v) != tt.wantValues || (len(v) > 0 && v[0] != tt.wantFirst) {
				t.Errorf("values = %v, want %d starting %q", v, tt.wantValues, tt.wantFirst)
			}
		})
	}
}

func TestAddPanicsOnBadData(t *testing.T) {
	tests := []struct {
		name  string
		build func(c *Catalog)
	}{
		{"duplicate tool", func(c *Catalog) {
			c.AddTool(mcp.Tool{Name: "t"}, noop)
			c.AddTool(mcp.Tool{Name: "t"}, noop)
		}},
		{"tool without a name", func(c *Catalog) { c.AddTool(mcp.Tool{}, noop) }},
		{"tool without a handler", func(c *Catalog) { c.AddTool(mcp.Tool{Name: "t"}, nil) }},
		{"input schema that is not an object schema", func(c *Catalog) {
			c.AddTool(mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"string"}`)}, noop)
		}},
		{"input schema that does not compile", func(c *Catalog) {
			c.AddTool(mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":7}}}`)}, noop)
		}},
		{"output schema that is not an object schema", func(c *Catalog) {
			c.AddTool(mcp.Tool{Name: "t", OutputSchema: json.RawMessage(`[]`)}, noop)
		}},
		{"duplicate resource", func(c *Catalog) {
			c.AddResource(mcp.Resource{URI: "x://a", Name: "a"}, Static())
			c.AddResource(mcp.Resource{URI: "x://a", Name: "b"}, Static())
		}},
		{"resource without a name", func(c *Catalog) { c.AddResource(mcp.Resource{URI: "x://a"}, Static()) }},
		{"malformed template", func(c *Catalog) {
			c.AddTemplate(mcp.ResourceTemplate{URITemplate: "x://{+path}", Name: "x"}, nil2)
		}},
		{"duplicate template", func(c *Catalog) {
			c.AddTemplate(mcp.ResourceTemplate{URITemplate: "x://{a}", Name: "x"}, nil2)
			c.AddTemplate(mcp.ResourceTemplate{URITemplate: "x://{a}", Name: "y"}, nil2)
		}},
		{"duplicate prompt argument", func(c *Catalog) {
			c.AddPrompt(mcp.Prompt{Name: "p", Arguments: []mcp.PromptArgument{{Name: "a"}, {Name: "a"}}},
				func(context.Context, map[string]string) (*mcp.GetPromptResult, error) { return nil, nil })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			tt.build(New())
		})
	}
}

// TestConcurrentUse: while eight goroutines each add a tool and a resource
// (and switch logging on again), eight others list, call, read and ask for
// the capabilities. Every answer is what a sequential call gives: a call or
// read of what was there from the start answers as before, the
// capabilities do not change, and a list is always the catalog's list as it
// stood at one moment (what was there first, then a prefix of the additions
// in the order they happened, which the final list shows). A writer that
// has added its tool and resource can call and read them at once. Run under
// -race (make test does), it also finds unguarded shared state.
func TestConcurrentUse(t *testing.T) {
	const writers = 8
	c := New()
	c.AddTool(mcp.Tool{Name: "t0"}, noop)
	c.AddResource(mcp.Resource{URI: "x://base", Name: "base"}, Static(Text("x://base", "", "base")))
	c.SetLogging(true)
	ctx := context.Background()

	// The sequential answers.
	wantCall, err := c.CallTool(ctx, &mcp.CallToolRequestParams{Name: "t0"})
	if err != nil {
		t.Fatal(err)
	}
	wantRead, err := c.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: "x://base"})
	if err != nil {
		t.Fatal(err)
	}
	wantCaps := c.Capabilities()

	same := func(what string, got, want any) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s, concurrently (-sequential +concurrent):\n%s", what, diff)
		}
	}
	var mu sync.Mutex
	var toolLists [][]string
	var resourceLists [][]string
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			name, uri := fmt.Sprintf("t%d", i+1), fmt.Sprintf("x://%d", i)
			c.AddTool(mcp.Tool{Name: name}, func(context.Context, json.RawMessage) (*mcp.CallToolResult, error) {
				return TextResult(name), nil
			})
			c.AddResource(mcp.Resource{URI: uri, Name: "r"}, Static(Text(uri, "", "r"+uri)))
			c.SetLogging(true)
			if res, err := c.CallTool(ctx, &mcp.CallToolRequestParams{Name: name}); err != nil {
				t.Errorf("calling %s just added: %v", name, err)
			} else {
				same("calling the tool just added", res, TextResult(name))
			}
			if read, err := c.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: uri}); err != nil {
				t.Errorf("reading %s just added: %v", uri, err)
			} else {
				same("reading the resource just added", read.Contents, []mcp.ReadResourceResultContentsItem{Text(uri, "", "r"+uri)})
			}
		})
		wg.Go(func() {
			for range 20 {
				tools, err := c.ListTools(ctx)
				if err != nil {
					t.Errorf("ListTools: %v", err)
					return
				}
				resources, err := c.ListResources(ctx)
				if err != nil {
					t.Errorf("ListResources: %v", err)
					return
				}
				mu.Lock()
				toolLists = append(toolLists, names(tools, func(t mcp.Tool) string { return t.Name }))
				resourceLists = append(resourceLists, names(resources, func(r mcp.Resource) string { return r.URI }))
				mu.Unlock()
				if res, err := c.CallTool(ctx, &mcp.CallToolRequestParams{Name: "t0"}); err != nil {
					t.Errorf("CallTool(t0): %v", err)
				} else {
					same("CallTool(t0)", res, wantCall)
				}
				if read, err := c.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: "x://base"}); err != nil {
					t.Errorf("ReadResource(x://base): %v", err)
				} else {
					same("ReadResource(x://base)", read, wantRead)
				}
				same("Capabilities()", c.Capabilities(), wantCaps)
			}
		})
	}
	wg.Wait()

	final, err := c.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	finalTools := names(final, func(t mcp.Tool) string { return t.Name })
	finalRes, err := c.ListResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	finalURIs := names(finalRes, func(r mcp.Resource) string { return r.URI })
	wantTools, wantURIs := []string{"t0"}, []string{"x://base"}
	for i := range writers {
		wantTools = append(wantTools, fmt.Sprintf("t%d", i+1))
		wantURIs = append(wantURIs, fmt.Sprintf("x://%d", i))
	}
	// What was there first stays first; the additions follow in the order
	// they happened, which varies.
	if len(finalTools) == 0 || finalTools[0] != "t0" || !slices.Equal(slices.Sorted(slices.Values(finalTools)), wantTools) {
		t.Errorf("tools after concurrent adds = %q, want t0, then t1 to t%d in any order", finalTools, writers)
	}
	if len(finalURIs) == 0 || finalURIs[0] != "x://base" || !slices.Equal(slices.Sorted(slices.Values(finalURIs)), slices.Sorted(slices.Values(wantURIs))) {
		t.Errorf("resources after concurrent adds = %q, want x://base, then x://0 to x://%d in any order", finalURIs, writers-1)
	}
	// Each list seen while adds went on is the final list as it stood at
	// some moment: one of its prefixes, never shorter than what was there
	// from the start.
	for _, l := range toolLists {
		if len(l) < 1 || !slices.Equal(l, finalTools[:min(len(l), len(finalTools))]) {
			t.Errorf("a concurrent tools/list gave %q; not a prefix of %q", l, finalTools)
		}
	}
	for _, l := range resourceLists {
		if len(l) < 1 || !slices.Equal(l, finalURIs[:min(len(l), len(finalURIs))]) {
			t.Errorf("a concurrent resources/list gave %q; not a prefix of %q", l, finalURIs)
		}
	}
	if len(toolLists) != writers*20 {
		t.Errorf("%d lists recorded, want %d", len(toolLists), writers*20)
	}
}

func names[T any](items []T, name func(T) string) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}

func TestHelpers(t *testing.T) {
	r, err := StructuredResult(map[string]int{"sum": 3})
	if err != nil {
		t.Fatal(err)
	}
	if string(r.StructuredContent) != `{"sum":3}` || firstText(r) != `{"sum":3}` {
		t.Errorf("StructuredResult: structured %s, text %q; want both {\"sum\":3}", r.StructuredContent, firstText(r))
	}
	b := Blob("x://b", "application/octet-stream", []byte{0, 1, 2})
	if got := b.Value.(*mcp.BlobResourceContents).Blob; got != "AAEC" {
		t.Errorf("Blob base64 = %q, want AAEC", got)
	}
	h := Typed(func(_ context.Context, in struct{ N int }) (*mcp.CallToolResult, error) {
		return TextResult(fmt.Sprint(in.N * 2)), nil
	})
	if r, _ := h(context.Background(), json.RawMessage(`{"N":21}`)); firstText(r) != "42" {
		t.Errorf("Typed handler = %q, want 42", firstText(r))
	}
	if r, _ := h(context.Background(), json.RawMessage(`{"N":"x"}`)); r.IsError == nil || !*r.IsError {
		t.Errorf("Typed handler on undecodable input = %+v, want a tool error", r)
	}
}
