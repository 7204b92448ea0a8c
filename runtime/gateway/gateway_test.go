package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/testkit/leakcheck"
)

func fixedTools(names ...string) *catalog.Catalog {
	c := catalog.New()
	for _, n := range names {
		c.AddTool(tool(n), func(ctx context.Context, args json.RawMessage) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: "mcpx:" + n}}}}, nil
		})
	}
	return c
}

func paged(f *fake, n int) *fake { f.pageSize = n; return f }

func TestToolNames(t *testing.T) {
	leakcheck.Check(t)
	for _, tc := range []struct {
		about string
		fixed []string
		ups   []any
		want  []string
	}{
		{"the default prefix is the name and two underscores, sorted",
			nil, []any{newFake("gh", "b", "a")}, []string{"gh__a", "gh__b"}},
		{"a configured prefix",
			nil, []any{newFake("gh", "a"), Options{Prefix: str("git_")}}, []string{"git_a"}},
		{"an empty prefix is none",
			nil, []any{newFake("gh", "a"), Options{Prefix: str("")}}, []string{"a"}},
		{"the root keeps its names, even invalid ones",
			nil, []any{newFake("gh", "a.b", "c"), Options{Root: true}}, []string{"a.b", "c"}},
		{"an invalid prefixed name is shortened",
			nil, []any{newFake("gh", "x.y")}, []string{"gh__x_y_" + h8("gh__x.y")}},
		{"include keeps only the listed upstream names",
			nil, []any{newFake("gh", "a", "b", "c"), Options{Include: []string{"a", "c", "zz"}}}, []string{"gh__a", "gh__c"}},
		{"exclude drops the listed upstream names",
			nil, []any{newFake("gh", "a", "b", "c"), Options{Exclude: []string{"b"}}}, []string{"gh__a", "gh__c"}},
		{"exclude applies after include",
			nil, []any{newFake("gh", "a", "b", "c"), Options{Include: []string{"a", "b"}, Exclude: []string{"b"}}}, []string{"gh__a"}},
		{"filters use upstream names, not exposed ones",
			nil, []any{newFake("gh", "a", "b"), Options{Exclude: []string{"gh__a"}}}, []string{"gh__a", "gh__b"}},
		{"contributed tools are sorted by exposed name across upstreams",
			nil, []any{newFake("z", "a"), newFake("a", "z", "b")}, []string{"a__b", "a__z", "z__a"}},
		{"fixed tools come first in their written order",
			[]string{"zeta", "alpha"}, []any{newFake("gh", "a")}, []string{"zeta", "alpha", "gh__a"}},
		{"every page of an upstream's list is read",
			nil, []any{paged(newFake("gh", "e", "d", "c", "b", "a"), 2)}, []string{"gh__a", "gh__b", "gh__c", "gh__d", "gh__e"}},
	} {
		t.Run(tc.about, func(t *testing.T) {
			g, _ := gateway(t)
			if tc.fixed != nil {
				if err := g.AddFixed(fixedTools(tc.fixed...)); err != nil {
					t.Fatal(err)
				}
			}
			addAll(t, g, tc.ups...)
			got := toolNames(t, g)
			if !slices.Equal(got, tc.want) {
				t.Errorf("tools = %q, want %q", got, tc.want)
			}
			if again := toolNames(t, g); !slices.Equal(again, got) {
				t.Errorf("a second list differs: %q", again)
			}
			for _, n := range got {
				if !ValidName(n) && !strings.Contains(n, ".") {
					t.Errorf("%q is not valid", n)
				}
			}
		})
	}
}

func addAll(t *testing.T, g *Gateway, ups ...any) {
	t.Helper()
	for i := 0; i < len(ups); i++ {
		var opt Options
		if i+1 < len(ups) {
			if o, ok := ups[i+1].(Options); ok {
				opt = o
				if err := g.Add(ups[i].(Upstream), opt); err != nil {
					t.Fatal(err)
				}
				i++
				continue
			}
		}
		if err := g.Add(ups[i].(Upstream), opt); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestCollisions(t *testing.T) {
	leakcheck.Check(t)
	shortA := "a__x_y_" + h8("a__x.y")
	for _, tc := range []struct {
		about string
		fixed []string
		ups   []any
		want  []string
		// calls maps exposed names to the text the call must answer,
		// "<upstream>:<original name>".
		calls map[string]string
		logs  []string
	}{
		{"two unprefixed upstreams with one name: the later is renamed",
			nil, []any{newFake("a", "search"), Options{Prefix: str("")}, newFake("b", "search"), Options{Prefix: str("")}},
			[]string{"search", disambiguate("search", "b", "search")},
			map[string]string{"search": "a:search", disambiguate("search", "b", "search"): "b:search"},
			[]string{`upstream \"a\" tool \"search\"`, `upstream \"b\" tool \"search\"`, "renamed"}},
		{"order of addition decides, not names",
			nil, []any{newFake("z", "s"), Options{Prefix: str("")}, newFake("a", "s"), Options{Prefix: str("")}},
			[]string{"s", disambiguate("s", "a", "s")},
			map[string]string{"s": "z:s", disambiguate("s", "a", "s"): "a:s"},
			[]string{`kept="upstream \"z\" tool \"s\""`}},
		{"a prefix equal to another upstream's default",
			nil, []any{newFake("a", "x"), newFake("b", "x"), Options{Prefix: str("a__")}},
			[]string{"a__x", disambiguate("a__x", "b", "x")},
			map[string]string{"a__x": "a:x", disambiguate("a__x", "b", "x"): "b:x"},
			[]string{`upstream \"b\" tool \"x\"`}},
		{"a shortened name meets a literal one",
			nil, []any{newFake("a", "x.y"), newFake("b", shortA), Options{Prefix: str("")}},
			[]string{shortA, disambiguate(shortA, "b", shortA)},
			map[string]string{shortA: "a:x.y", disambiguate(shortA, "b", shortA): "b:" + shortA},
			[]string{"renamed"}},
		{"mcpx's own tool wins over an upstream's",
			[]string{"echo"}, []any{newFake("a", "echo"), Options{Prefix: str("")}},
			[]string{"echo", disambiguate("echo", "a", "echo")},
			map[string]string{"echo": "mcpx:echo", disambiguate("echo", "a", "echo"): "a:echo"},
			[]string{`kept="mcpx's own tool \"echo\""`}},
		{"a root tool meets an unprefixed one",
			nil, []any{newFake("r", "t"), Options{Root: true}, newFake("b", "t"), Options{Prefix: str("")}},
			[]string{"t", disambiguate("t", "b", "t")},
			map[string]string{"t": "r:t", disambiguate("t", "b", "t"): "b:t"},
			[]string{"renamed"}},
		{"an upstream listing a name twice: the second is dropped",
			nil, []any{newFake("a", "t", "t")},
			[]string{"a__t"},
			map[string]string{"a__t": "a:t"},
			[]string{"twice", "dropped"}},
	} {
		t.Run(tc.about, func(t *testing.T) {
			g, logs := gateway(t)
			if tc.fixed != nil {
				if err := g.AddFixed(fixedTools(tc.fixed...)); err != nil {
					t.Fatal(err)
				}
			}
			addAll(t, g, tc.ups...)
			got := toolNames(t, g)
			if !slices.Equal(got, tc.want) {
				t.Errorf("tools = %q, want %q", got, tc.want)
			}
			for name, want := range tc.calls {
				res, err := g.CallTool(context.Background(), &mcp.CallToolRequestParams{Name: name})
				if err != nil || text(res) != want {
					t.Errorf("call %q = %q, %v; want %q", name, text(res), err, want)
				}
			}
			for _, s := range tc.logs {
				if !strings.Contains(logs.String(), s) {
					t.Errorf("log lacks %s:\n%s", s, logs)
				}
			}
			if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
				t.Errorf("%d warnings, want 1 (once, however often the lists are rebuilt):\n%s", n, logs)
			}
		})
	}
}

func TestCallTool(t *testing.T) {
	leakcheck.Check(t)
	link := func(uri string) mcp.ContentBlock {
		return mcp.ContentBlock{Value: &mcp.ResourceLink{URI: uri, Name: "l"}}
	}
	embedded := func(uri string) mcp.ContentBlock {
		return mcp.ContentBlock{Value: &mcp.EmbeddedResource{Resource: mcp.EmbeddedResourceResource{Value: &mcp.BlobResourceContents{URI: uri, Blob: "AA=="}}}}
	}
	uris := func(r *mcp.CallToolResult) []string {
		var out []string
		for _, b := range r.Content {
			switch c := b.Value.(type) {
			case *mcp.ResourceLink:
				out = append(out, c.URI)
			case *mcp.EmbeddedResource:
				out = append(out, c.Resource.Value.(*mcp.BlobResourceContents).URI)
			}
		}
		return out
	}
	for _, tc := range []struct {
		about  string
		opt    Options
		name   string
		answer func(p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error)
		check  func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams)
	}{
		{"the upstream gets its own name and the arguments", Options{}, "gh__create_issue", nil,
			func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams) {
				if err != nil || text(res) != "gh:create_issue" || sent.Name != "create_issue" || string(sent.Arguments) != `{"a":1}` {
					t.Errorf("got %q, %v; sent %+v", text(res), err, sent)
				}
			}},
		{"a shortened name maps back exactly", Options{}, "gh__x_y_" + h8("gh__x.y"), nil,
			func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams) {
				if err != nil || sent.Name != "x.y" {
					t.Errorf("got %v; sent %+v", err, sent)
				}
			}},
		{"an unknown name is ErrUnknownTool", Options{}, "gh__nope", nil,
			func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams) {
				if !errors.Is(err, server.ErrUnknownTool) || !strings.Contains(err.Error(), "gh__nope") || sent != nil {
					t.Errorf("got %v; sent %+v", err, sent)
				}
			}},
		{"an upstream name without the prefix is unknown", Options{}, "create_issue", nil,
			func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams) {
				if !errors.Is(err, server.ErrUnknownTool) {
					t.Errorf("got %v", err)
				}
			}},
		{"an excluded tool is unknown", Options{Exclude: []string{"create_issue"}}, "gh__create_issue", nil,
			func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams) {
				if !errors.Is(err, server.ErrUnknownTool) || sent != nil {
					t.Errorf("got %v; sent %+v", err, sent)
				}
			}},
		{"a tool not included is unknown", Options{Include: []string{"x.y"}}, "gh__create_issue", nil,
			func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams) {
				if !errors.Is(err, server.ErrUnknownTool) || sent != nil {
					t.Errorf("got %v; sent %+v", err, sent)
				}
			}},
		{"an upstream's JSON-RPC error stays an error, without its code", Options{}, "gh__create_issue",
			func(*mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return nil, rpcErr(-32000, "rate limited")
			},
			func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams) {
				var ue *UpstreamError
				if res != nil || !errors.As(err, &ue) || errors.As(err, new(*jsonrpc.Error)) || !strings.Contains(err.Error(), "rate limited") || !strings.Contains(err.Error(), `"gh"`) {
					t.Errorf("got %v, %v", res, err)
				}
			}},
		{"an upstream's invalid params is invalid params", Options{}, "gh__create_issue",
			func(*mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return nil, rpcErr(-32602, "missing title")
			},
			func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams) {
				var ip *server.InvalidParamsError
				if !errors.As(err, &ip) || !strings.Contains(err.Error(), "missing title") {
					t.Errorf("got %v", err)
				}
			}},
		{"a failure to reach the upstream names it", Options{}, "gh__create_issue",
			func(*mcp.CallToolRequestParams) (*mcp.CallToolResult, error) { return nil, errBoom },
			func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams) {
				if !errors.Is(err, errBoom) || !strings.Contains(err.Error(), `upstream "gh"`) {
					t.Errorf("got %v", err)
				}
			}},
		{"a timeout stays a timeout", Options{}, "gh__create_issue",
			func(*mcp.CallToolRequestParams) (*mcp.CallToolResult, error) { return nil, context.DeadlineExceeded },
			func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams) {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("got %v", err)
				}
			}},
		{"an isError result the upstream answered is a result", Options{}, "gh__create_issue",
			func(*mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{IsError: mcp.Ptr(true), Content: []mcp.ContentBlock{{Value: &mcp.TextContent{Text: "no such repo"}}}}, nil
			},
			func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams) {
				if err != nil || res.IsError == nil || !*res.IsError || text(res) != "no such repo" {
					t.Errorf("got %+v, %v", res, err)
				}
			}},
		{"resource links and embedded resources get mcpx:// URIs", Options{}, "gh__create_issue",
			func(*mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.ContentBlock{link("file:///a"), embedded("repo://b")}}, nil
			},
			func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams) {
				if got := uris(res); err != nil || !slices.Equal(got, []string{"mcpx://gh/file:///a", "mcpx://gh/repo://b"}) {
					t.Errorf("got %q, %v", got, err)
				}
			}},
		{"the root's URIs pass through", Options{Root: true}, "create_issue",
			func(*mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.ContentBlock{link("file:///a"), embedded("repo://b")}}, nil
			},
			func(t *testing.T, res *mcp.CallToolResult, err error, sent *mcp.CallToolRequestParams) {
				if got := uris(res); err != nil || !slices.Equal(got, []string{"file:///a", "repo://b"}) {
					t.Errorf("got %q, %v", got, err)
				}
			}},
	} {
		t.Run(tc.about, func(t *testing.T) {
			f := newFake("gh", "create_issue", "x.y")
			f.callTool = tc.answer
			g, _ := gateway(t, f, tc.opt)
			res, err := g.CallTool(context.Background(), &mcp.CallToolRequestParams{Name: tc.name, Arguments: json.RawMessage(`{"a":1}`)})
			sent, _ := f.last().(*mcp.CallToolRequestParams)
			tc.check(t, res, err, sent)
		})
	}
}

func TestReadResource(t *testing.T) {
	leakcheck.Check(t)
	for _, tc := range []struct {
		about    string
		root     bool
		uri      string
		answer   error
		notFound bool
		errHas   string
		sent     string // the URI the upstream must get, "" for none
		content  string // the URI the contents must carry
	}{
		{"an mcpx URI is read from its namespace", false, "mcpx://fs/file:///a", nil, false, "", "file:///a", "mcpx://fs/file:///a"},
		{"not an mcpx URI, and no root", false, "file:///a", nil, true, "", "", ""},
		{"no namespace in it", false, "mcpx:///file:///a", nil, true, "", "", ""},
		{"nothing after the namespace", false, "mcpx://fs", nil, true, "", "", ""},
		{"a namespace not configured", false, "mcpx://nope/file:///a", nil, true, "", "", ""},
		{"a namespace that serves no resources", false, "mcpx://tools/x", nil, true, "", "", ""},
		{"the upstream answered -32002", false, "mcpx://fs/file:///gone", rpcErr(-32002, "Resource not found"), true, "", "file:///gone", ""},
		{"the upstream answered -32602", false, "mcpx://fs/file:///gone", rpcErr(-32602, "unknown resource"), true, "", "file:///gone", ""},
		{"another upstream error carries its message", false, "mcpx://fs/file:///a", rpcErr(-32603, "disk on fire"), false, "disk on fire", "file:///a", ""},
		{"a failure to reach the upstream names it", false, "mcpx://fs/file:///a", errBoom, false, `upstream "fs"`, "file:///a", ""},
		{"a timeout is no not-found", false, "mcpx://fs/file:///a", context.DeadlineExceeded, false, "deadline", "file:///a", ""},
		{"other URIs go to the root, unchanged", true, "file:///a", nil, false, "", "file:///a", "file:///a"},
		{"the root's not-found is the client's URI", true, "file:///gone", rpcErr(-32002, "nope"), true, "", "file:///gone", ""},
	} {
		t.Run(tc.about, func(t *testing.T) {
			fs := newFake("fs")
			fs.caps = mcp.ServerCapabilities{Resources: &mcp.ServerCapabilitiesResources{}}
			if tc.answer != nil {
				fs.read = func(*mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) { return nil, tc.answer }
			}
			g, _ := gateway(t, fs, Options{Root: tc.root}, newFake("tools", "t"))
			res, err := g.ReadResource(context.Background(), &mcp.ReadResourceRequestParams{URI: tc.uri})
			var nf *server.ResourceNotFoundError
			switch {
			case tc.notFound:
				if !errors.As(err, &nf) || nf.URI != tc.uri {
					t.Errorf("err = %v, want resource not found for %q", err, tc.uri)
				}
			case tc.errHas != "":
				if err == nil || errors.As(err, &nf) || errors.As(err, new(*jsonrpc.Error)) || !strings.Contains(err.Error(), tc.errHas) {
					t.Errorf("err = %v, want a plain error with %q", err, tc.errHas)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Contents[0].Value.(*mcp.TextResourceContents).URI; got != tc.content {
					t.Errorf("contents URI = %q, want %q", got, tc.content)
				}
			}
			sent, _ := fs.last().(*mcp.ReadResourceRequestParams)
			switch {
			case tc.sent == "" && sent != nil:
				t.Errorf("the upstream was asked for %q", sent.URI)
			case tc.sent != "" && (sent == nil || sent.URI != tc.sent):
				t.Errorf("the upstream got %+v, want %q", sent, tc.sent)
			}
		})
	}
}

func TestListsExposeURIsAndNames(t *testing.T) {
	leakcheck.Check(t)
	for _, tc := range []struct {
		about                string
		opt                  Options
		resources, templates []string
		prompts, messageURIs []string
	}{
		{"a namespace puts its URIs under mcpx:// and prefixes prompts", Options{},
			[]string{"mcpx://fs/file:///a", "mcpx://fs/db://t/1"}, []string{"mcpx://fs/file:///{path}"},
			[]string{"fs__greet", "fs__x_y_" + h8("fs__x.y")}, []string{"mcpx://fs/file:///a"}},
		{"the root passes them through", Options{Root: true},
			[]string{"file:///a", "db://t/1"}, []string{"file:///{path}"},
			[]string{"greet", "x.y"}, []string{"file:///a"}},
	} {
		t.Run(tc.about, func(t *testing.T) {
			fs := newFake("fs")
			fs.caps = mcp.ServerCapabilities{Resources: &mcp.ServerCapabilitiesResources{}, Prompts: &mcp.ServerCapabilitiesPrompts{}}
			fs.resources = []mcp.Resource{{URI: "file:///a", Name: "a"}, {URI: "db://t/1", Name: "t1"}}
			fs.templates = []mcp.ResourceTemplate{{URITemplate: "file:///{path}", Name: "files"}}
			fs.prompts = []mcp.Prompt{{Name: "x.y"}, {Name: "greet"}}
			fs.getPrompt = func(p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
					{Role: mcp.RoleUser, Content: mcp.ContentBlock{Value: &mcp.EmbeddedResource{Resource: mcp.EmbeddedResourceResource{Value: &mcp.TextResourceContents{URI: "file:///a", Text: p.Name}}}}},
				}}, nil
			}
			g, _ := gateway(t, fs, tc.opt)
			ctx := context.Background()
			rs, err := g.ListResources(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(rs, func(r mcp.Resource) string { return r.URI }); !slices.Equal(got, tc.resources) {
				t.Errorf("resources = %q, want %q", got, tc.resources)
			}
			ts, err := g.ListResourceTemplates(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(ts, func(r mcp.ResourceTemplate) string { return r.URITemplate }); !slices.Equal(got, tc.templates) {
				t.Errorf("templates = %q, want %q", got, tc.templates)
			}
			ps, err := g.ListPrompts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := names(ps, func(p mcp.Prompt) string { return p.Name })
			if !slices.Equal(got, tc.prompts) {
				t.Errorf("prompts = %q, want %q", got, tc.prompts)
			}
			res, err := g.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: got[1]})
			if err != nil {
				t.Fatal(err)
			}
			c := res.Messages[0].Content.Value.(*mcp.EmbeddedResource).Resource.Value.(*mcp.TextResourceContents)
			if c.URI != tc.messageURIs[0] || c.Text != "x.y" {
				t.Errorf("message resource = %+v, want URI %q from prompt x.y", c, tc.messageURIs[0])
			}
			if fs.resources[0].URI != "file:///a" {
				t.Errorf("the upstream's values were modified")
			}
			if _, err := g.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: "nope"}); !errors.Is(err, server.ErrUnknownPrompt) {
				t.Errorf("unknown prompt: %v", err)
			}
		})
	}
}

func TestComplete(t *testing.T) {
	leakcheck.Check(t)
	promptRef := func(n string) mcp.CompleteRequestParamsRef {
		return mcp.CompleteRequestParamsRef{Value: &mcp.PromptReference{Name: n}}
	}
	templateRef := func(u string) mcp.CompleteRequestParamsRef {
		return mcp.CompleteRequestParamsRef{Value: &mcp.ResourceTemplateReference{URI: u}}
	}
	for _, tc := range []struct {
		about   string
		ref     mcp.CompleteRequestParamsRef
		sent    string // the name or template the upstream gets
		invalid bool
		values  []string
	}{
		{"a prompt reference gets the upstream's name", promptRef("fs__x_y_" + h8("fs__x.y")), "x.y", false, []string{"v"}},
		{"a template reference gets the upstream's template", templateRef("mcpx://fs/file:///{path}"), "file:///{path}", false, []string{"v"}},
		{"an unknown prompt is invalid params", promptRef("nope"), "", true, nil},
		{"a template of no namespace is invalid params", templateRef("mcpx://nope/x"), "", true, nil},
		{"a template without mcpx:// and no root is invalid params", templateRef("file:///{path}"), "", true, nil},
		{"an upstream without completion/complete (-32601) gives no values", promptRef("plain__p"), "", false, []string{}},
	} {
		t.Run(tc.about, func(t *testing.T) {
			fs := newFake("fs")
			fs.caps = mcp.ServerCapabilities{Resources: &mcp.ServerCapabilitiesResources{}, Prompts: &mcp.ServerCapabilitiesPrompts{}, Completions: json.RawMessage(`{}`)}
			fs.prompts = []mcp.Prompt{{Name: "x.y"}}
			plain := newFake("plain")
			plain.caps = mcp.ServerCapabilities{Prompts: &mcp.ServerCapabilitiesPrompts{}}
			plain.prompts = []mcp.Prompt{{Name: "p"}}
			plain.complete = func(*mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
				return nil, jsonrpc.Errorf(jsonrpc.MethodNotFound, nil, "no completion/complete")
			}
			g, _ := gateway(t, fs, plain)
			res, err := g.Complete(context.Background(), &mcp.CompleteRequestParams{Ref: tc.ref, Argument: mcp.CompleteRequestParamsArgument{Name: "a", Value: "b"}})
			if tc.invalid {
				if !errors.As(err, new(*server.InvalidParamsError)) {
					t.Errorf("err = %v, want invalid params", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Completion.Values, tc.values) {
				t.Errorf("values = %q, want %q", res.Completion.Values, tc.values)
			}
			sent, _ := fs.last().(*mcp.CompleteRequestParams)
			got := ""
			if sent != nil {
				switch r := sent.Ref.Value.(type) {
				case *mcp.PromptReference:
					got = r.Name
				case *mcp.ResourceTemplateReference:
					got = r.URI
				}
			}
			if got != tc.sent {
				t.Errorf("the upstream got %q, want %q", got, tc.sent)
			}
		})
	}
}

func TestCapabilities(t *testing.T) {
	leakcheck.Check(t)
	for _, tc := range []struct {
		about                                     string
		caps                                      []mcp.ServerCapabilities
		tools, resources, prompts, complete, logs bool
	}{
		{"nothing declared, nothing offered", []mcp.ServerCapabilities{{}}, false, false, false, false, false},
		{"the union of the upstreams'", []mcp.ServerCapabilities{
			{Tools: &mcp.ServerCapabilitiesTools{ListChanged: mcp.Ptr(true)}, Logging: json.RawMessage(`{}`)},
			{Resources: &mcp.ServerCapabilitiesResources{ListChanged: mcp.Ptr(true), Subscribe: mcp.Ptr(true)}, Prompts: &mcp.ServerCapabilitiesPrompts{}, Completions: json.RawMessage(`{}`)},
		}, true, true, true, true, true},
	} {
		t.Run(tc.about, func(t *testing.T) {
			var ups []any
			for i, c := range tc.caps {
				f := newFake(string(rune('a' + i)))
				f.caps = c
				ups = append(ups, f)
			}
			g, _ := gateway(t, ups...)
			c := g.Capabilities()
			if (c.Tools != nil) != tc.tools || (c.Resources != nil) != tc.resources || (c.Prompts != nil) != tc.prompts ||
				(c.Completions != nil) != tc.complete || (c.Logging != nil) != tc.logs {
				b, _ := json.Marshal(c)
				t.Errorf("capabilities = %s", b)
			}
			// listChanged stays false here even though the upstreams
			// declared it: the gateway is a server.Changer, and the edge
			// declares listChanged for every list it offers and delivers
			// the gateway's Changes (runtime/edge, capabilities).
			for what, lc := range map[string]*bool{"tools": ptrOf(c.Tools), "resources": ptrOf(c.Resources), "prompts": ptrOf(c.Prompts)} {
				if lc != nil && *lc {
					t.Errorf("%s.listChanged is true; the gateway leaves it false, for the edge to declare", what)
				}
			}
			if c.Resources != nil && c.Resources.Subscribe != nil && *c.Resources.Subscribe {
				t.Errorf("resources.subscribe declared")
			}
			_, err := g.ListResources(context.Background())
			if !tc.resources && !errors.Is(err, server.ErrUnsupported) {
				t.Errorf("ListResources without resources: %v", err)
			}
		})
	}
}

func ptrOf(c any) *bool {
	switch c := c.(type) {
	case *mcp.ServerCapabilitiesTools:
		if c != nil {
			return c.ListChanged
		}
	case *mcp.ServerCapabilitiesResources:
		if c != nil {
			return c.ListChanged
		}
	case *mcp.ServerCapabilitiesPrompts:
		if c != nil {
			return c.ListChanged
		}
	}
	return nil
}

func TestToolDefinitionPassesThrough(t *testing.T) {
	leakcheck.Check(t)
	for _, ts := range []mcp.TaskSupport{mcp.TaskSupportRequired, mcp.TaskSupportOptional, mcp.TaskSupportForbidden, ""} {
		t.Run("taskSupport "+string(ts)+" is kept", func(t *testing.T) {
			f := newFake("gh")
			up := tool("t")
			up.Description, up.Title = "d", "T"
			up.OutputSchema = json.RawMessage(`{"type":"object"}`)
			if ts != "" {
				up.Execution = &mcp.ToolExecution{TaskSupport: ts}
			}
			f.tools = []mcp.Tool{up}
			g, _ := gateway(t, f)
			tools, err := g.ListTools(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got := tools[0]
			up.Name = "gh__t"
			a, _ := json.Marshal(got)
			b, _ := json.Marshal(up)
			if string(a) != string(b) {
				t.Errorf("exposed %s\nwant    %s", a, b)
			}
		})
	}
}

func TestPaginationGuards(t *testing.T) {
	leakcheck.Check(t)
	for _, tc := range []struct {
		about string
		set   func(f *fake)
		log   string
	}{
		{"a cursor that repeats takes the upstream down", func(f *fake) { f.loopPages = true }, "twice"},
		{"pages that never end take the upstream down", func(f *fake) { f.endless = true }, "more than 1000 pages"},
		{"a failing list takes the upstream down", func(f *fake) { f.listErr = errBoom }, "boom"},
	} {
		t.Run(tc.about, func(t *testing.T) {
			bad := newFake("bad", "t")
			tc.set(bad)
			g, logs := gateway(t, bad, newFake("good", "t"))
			if got := toolNames(t, g); !slices.Equal(got, []string{"good__t"}) {
				t.Errorf("tools = %q", got)
			}
			if !strings.Contains(logs.String(), "upstream is down") || !strings.Contains(logs.String(), tc.log) || !strings.Contains(logs.String(), "upstream=bad") {
				t.Errorf("log:\n%s", logs)
			}
			_, err := g.CallTool(context.Background(), &mcp.CallToolRequestParams{Name: "bad__t"})
			if err == nil || errors.Is(err, server.ErrUnknownTool) {
				t.Errorf("call to a tool never loaded: %v", err)
			}
		})
	}
}

func TestChanges(t *testing.T) {
	leakcheck.Check(t)
	f := newFake("gh", "a")
	f.caps.Prompts = &mcp.ServerCapabilitiesPrompts{}
	g, logs := gateway(t, f)
	ctx := context.Background()
	steps := []struct {
		about string
		set   func(f *fake)
		event string
		tools []string
		call  string // a call that must fail naming gh, or "" for none
	}{
		{"tools list_changed reloads the tools",
			func(f *fake) { f.tools = append(f.tools, tool("b")) }, mcp.MethodNotificationsToolsListChanged, []string{"gh__a", "gh__b"}, ""},
		{"prompts list_changed reloads the prompts",
			func(f *fake) { f.prompts = []mcp.Prompt{{Name: "p"}} }, mcp.MethodNotificationsPromptsListChanged, []string{"gh__a", "gh__b"}, ""},
		{"down withdraws its tools and its calls fail naming it",
			nil, EventDown, []string{}, "gh__a"},
		{"up brings them back, reloaded",
			func(f *fake) { f.tools = []mcp.Tool{tool("c")} }, EventUp, []string{"gh__c"}, ""},
		{"a failed reload is down too",
			func(f *fake) { f.listErr = errBoom }, mcp.MethodNotificationsToolsListChanged, []string{}, "gh__c"},
		{"a down upstream is retried until it loads",
			func(f *fake) { f.listErr = nil }, "", []string{"gh__c"}, ""},
	}
	for _, s := range steps {
		t.Run(s.about, func(t *testing.T) {
			v := g.Version()
			if s.set != nil {
				f.set(s.set)
			}
			if s.event != "" {
				f.event(s.event)
			}
			eventually(t, "the version to change", func() bool { return g.Version() != v })
			eventually(t, "the tools", func() bool { return slices.Equal(toolNames(t, g), s.tools) })
			if s.call != "" {
				_, err := g.CallTool(ctx, &mcp.CallToolRequestParams{Name: s.call})
				var de *DownError
				if !errors.As(err, &de) || de.Upstream != "gh" || !strings.Contains(err.Error(), `upstream "gh" is down`) {
					t.Errorf("call %q: %v", s.call, err)
				}
			}
		})
	}
	ps, err := g.ListPrompts(ctx)
	if err != nil || len(ps) != 1 || ps[0].Name != "gh__p" {
		t.Errorf("prompts = %+v, %v", ps, err)
	}
	if !strings.Contains(logs.String(), "up again") {
		t.Errorf("log:\n%s", logs)
	}
}

func TestAddRejects(t *testing.T) {
	leakcheck.Check(t)
	for _, tc := range []struct {
		about string
		name  string
		opt   Options
	}{
		{"an empty name", "", Options{}},
		{"a name with a slash", "a/b", Options{}},
		{"a name added twice", "dup", Options{}},
		{"a second root", "root2", Options{Root: true}},
		{"a root with a prefix", "r", Options{Root: true, Prefix: str("x_")}},
	} {
		t.Run(tc.about, func(t *testing.T) {
			g, _ := gateway(t, newFake("dup"), newFake("root1"), Options{Root: true})
			f := newFake(tc.name)
			if err := g.Add(f, tc.opt); err == nil {
				t.Errorf("Add accepted it")
			}
			if f.closed {
				t.Errorf("a rejected upstream was closed")
			}
		})
	}
}

func TestCloseStopsWatchersAndUpstreams(t *testing.T) {
	leakcheck.Check(t)
	before := runtime.NumGoroutine()
	var fakes []*fake
	g := New(nil)
	for _, n := range []string{"a", "b", "c"} {
		f := newFake(n, "t")
		fakes = append(fakes, f)
		if err := g.Add(f, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	fakes[1].changes <- EventDown
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range fakes {
		if !f.closed {
			t.Errorf("upstream %s not closed", f.name)
		}
	}
	if err := g.Add(newFake("d"), Options{}); err == nil {
		t.Errorf("Add after Close accepted")
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
}

// TestConcurrentUse: four goroutines list, call, ask for the capabilities
// and the version while the upstream reports list changes, goes down and
// comes up again, over and over. Every answer is one a sequential call
// gives in one of the two states the upstream is in: its tools and the call
// result while it is up, or no tools and the call failing with a DownError
// naming it while it is down; the capabilities never change (a down
// upstream keeps its features declared) and the version never goes back.
// Run under -race (make test does), it also finds unguarded shared state.
//
// (A call that found the tool withdrawn while its upstream was down, but
// the upstream back up by the time it asked why, used to fail with
// `tool "gh__a": %!w(<nil>)`; TestUpAgainBetweenLookupAndState pins that
// case deterministically.)
func TestConcurrentUse(t *testing.T) {
	leakcheck.Check(t)
	f := newFake("gh", "a", "b")
	g := heldDownGateway(t, f)
	bg := context.Background()
	// An answer, comparable: a list's tools, a call result's text, an
	// error's text.
	type answer struct {
		Tools []mcp.Tool
		Text  string
		Err   string
	}
	list := func() answer {
		tools, err := g.ListTools(bg)
		a := answer{Tools: tools}
		if err != nil {
			a.Err = err.Error()
		}
		return a
	}
	call := func() (answer, error) {
		res, err := g.CallTool(bg, &mcp.CallToolRequestParams{Name: "gh__a"})
		a := answer{Text: text(res)}
		if err != nil {
			a.Err = err.Error()
		}
		return a, err
	}
	// The sequential answers: up, then down, then up again.
	upList, caps := list(), g.Capabilities()
	upCall, _ := call()
	if len(upList.Tools) != 2 || upList.Err != "" || upCall.Text != "gh:a" || upCall.Err != "" {
		t.Fatalf("up: list %+v, call %+v", upList, upCall)
	}
	f.event(EventDown)
	eventually(t, "the upstream to be down", func() bool { return len(toolNames(t, g)) == 0 })
	downList := list()
	downCall, downErr := call()
	if de := (*DownError)(nil); len(downList.Tools) != 0 || downList.Err != "" || downCall.Text != "" ||
		!errors.As(downErr, &de) || de.Upstream != "gh" {
		t.Fatalf("down: list %+v, call %+v; want no tools and a DownError naming gh", downList, downCall)
	}
	f.event(EventUp)
	eventually(t, "the upstream to be up", func() bool { return len(toolNames(t, g)) == 2 })
	if again, _ := call(); !cmp.Equal(list(), upList) || !cmp.Equal(again, upCall) {
		t.Fatalf("up again answers differently from up")
	}

	ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	var seenUp, seenDown atomic.Int64
	for range 4 {
		wg.Go(func() {
			var last uint64
			for ctx.Err() == nil {
				v := g.Version()
				if v < last {
					t.Errorf("Version went back from %d to %d", last, v)
				}
				last = v
				// The upstream may change state between the list and the
				// call, so each is checked on its own.
				switch l := list(); {
				case cmp.Equal(l, upList):
					seenUp.Add(1)
				case cmp.Equal(l, downList):
					seenDown.Add(1)
				default:
					t.Errorf("a concurrent tools/list answered %+v; sequentially it is %+v (up) or %+v (down)", l, upList, downList)
				}
				if c, _ := call(); !cmp.Equal(c, upCall) && !cmp.Equal(c, downCall) {
					t.Errorf("a concurrent call answered %+v; sequentially it is %+v (up) or %+v (down)", c, upCall, downCall)
				}
				if diff := cmp.Diff(caps, g.Capabilities()); diff != "" {
					t.Errorf("Capabilities changed (-sequential +concurrent):\n%s", diff)
				}
			}
		})
	}
	for i := 0; ctx.Err() == nil; i++ {
		f.set(func(f *fake) { f.tools = append(f.tools[:0:0], f.tools...) })
		f.eventCtx(ctx, []string{mcp.MethodNotificationsToolsListChanged, EventDown, EventUp}[i%3])
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
	t.Logf("lists: %d answered up, %d down", seenUp.Load(), seenDown.Load())
}

// TestUpAgainBetweenLookupAndState: a tools/call or prompts/get that finds
// its name withdrawn because the upstream is down, while the upstream comes
// back up right after the lookup, answers as it was when looked up (down,
// with a DownError naming it), not with an error wrapping nothing.
func TestUpAgainBetweenLookupAndState(t *testing.T) {
	leakcheck.Check(t)
	f := newFake("gh", "a")
	f.caps.Prompts = &mcp.ServerCapabilitiesPrompts{}
	f.prompts = []mcp.Prompt{{Name: "p"}}
	g := heldDownGateway(t, f)
	bg := context.Background()
	t.Cleanup(func() { testHookAfterLookup = nil })
	for _, c := range []struct {
		what string
		do   func() error
	}{
		{"tools/call", func() error {
			_, err := g.CallTool(bg, &mcp.CallToolRequestParams{Name: "gh__a"})
			return err
		}},
		{"prompts/get", func() error {
			_, err := g.GetPrompt(bg, &mcp.GetPromptRequestParams{Name: "gh__p"})
			return err
		}},
	} {
		f.event(EventDown)
		eventually(t, "the upstream to be down", func() bool { return len(toolNames(t, g)) == 0 })
		testHookAfterLookup = func() {
			testHookAfterLookup = nil
			f.event(EventUp)
			eventually(t, "the upstream to be up", func() bool { return len(toolNames(t, g)) == 1 })
		}
		err := c.do()
		var de *DownError
		if !errors.As(err, &de) || de.Upstream != "gh" || strings.Contains(err.Error(), "%!") {
			t.Errorf("%s while the upstream comes back up: %v; want the DownError of the moment it was looked up", c.what, err)
		}
		if err := c.do(); err != nil {
			t.Errorf("%s once up: %v", c.what, err)
		}
	}
}

// heldDownGateway is a loaded gateway of f as gateway() builds it, but a
// down upstream is not retried on its own: it stays down until its "up",
// so that the down state holds still while answers are taken.
func heldDownGateway(t *testing.T, f *fake) *Gateway {
	t.Helper()
	g := New(slog.New(slog.NewTextHandler(&logBuf{}, nil)))
	g.RetryMin, g.RetryMax, g.LoadTimeout = time.Hour, time.Hour, 5*time.Second
	t.Cleanup(func() { g.Close() })
	if err := g.Add(f, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := g.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	return g
}
