package peertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// goSDKRevisions are the revisions in the tables go-sdk v1.8.0 can be
// pinned to, oldest first (see goSDKClient).
var goSDKRevisions = revisionsOf(goSDKClient)

// connectGoSDK starts mcpx over transport, connects a go-sdk client pinned
// to rev (with opts, which may be nil), and records the wire for validation when the test ends.
func connectGoSDK(t *testing.T, transport, rev string, opts *gosdk.ClientOptions) (*gosdk.ClientSession, *mcpxConn) {
	m := startMCPX(t, transport, rev)
	var tr gosdk.Transport
	if m.proc != nil {
		tr = &gosdk.IOTransport{Reader: m.proc.Stdout, Writer: m.proc.Stdin}
	} else {
		tr = &gosdk.StreamableClientTransport{Endpoint: m.url, HTTPClient: m.client, MaxRetries: -1}
	}
	c := gosdk.NewClient(&gosdk.Implementation{Name: "peertest-go-sdk", Version: "1.0.0"}, opts)
	cs, err := c.Connect(t.Context(), tr, &gosdk.ClientSessionOptions{ProtocolVersion: rev})
	if err != nil {
		t.Fatalf("go-sdk Connect pinned to %s over %s: %v", rev, transport, err)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("go-sdk ClientSession.Close: %v", err)
		}
	})
	return cs, m
}

// TestGoSDK runs the go-sdk client pinned to every revision over both
// transports through every demo feature.
func TestGoSDK(t *testing.T) {
	t.Parallel()
	for _, transport := range transports {
		for _, rev := range goSDKRevisions {
			t.Run(fmt.Sprintf("over %s pinned to %s", transport, rev), func(t *testing.T) {
				t.Parallel()
				cs, _ := connectGoSDK(t, transport, rev, nil)
				for _, step := range goSDKSteps {
					t.Run(step.name, func(t *testing.T) { step.run(t.Context(), t, cs, rev) })
				}
			})
		}
	}
}

var goSDKSteps = []struct {
	name string
	run  func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string)
}{
	{"connect negotiates the pinned revision", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		r := cs.InitializeResult()
		if r.ProtocolVersion != rev {
			t.Errorf("protocolVersion %q, want the pinned %q", r.ProtocolVersion, rev)
		}
		if r.ServerInfo == nil {
			t.Fatalf("no serverInfo")
		}
		if r.ServerInfo.Name != serverInfo.Name || r.ServerInfo.Version == "" {
			t.Errorf("serverInfo %+v, want name %q and a version", r.ServerInfo, serverInfo.Name)
		}
		checkTitle(t, rev, "serverInfo", r.ServerInfo.Title, serverInfo.Title)
		caps := r.Capabilities
		if caps == nil || caps.Tools == nil || caps.Resources == nil || caps.Prompts == nil {
			t.Fatalf("capabilities %+v, want tools, resources and prompts", caps)
		}
		if got, want := caps.Completions != nil, hasCompletions(rev); got != want {
			t.Errorf("completions capability present: %v, want %v at %s", got, want, rev)
		}
	}},
	{"ping", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		if !hasPing(rev) {
			t.Skipf("%s has no ping", rev)
		}
		if err := cs.Ping(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}},
	{"list tools", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			checkTitle(t, rev, "tool "+tool.Name, tool.Title, wantToolTitle[tool.Name])
			if tool.Description == "" || tool.InputSchema == nil {
				t.Errorf("tool %s: description %q, inputSchema %v; want both", tool.Name, tool.Description, tool.InputSchema)
			}
			if !hasAnnotations(rev) {
				if tool.Annotations != nil {
					t.Errorf("tool %s: annotations %+v at %s, which has none", tool.Name, tool.Annotations, rev)
				}
			} else if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint || tool.Annotations.Title != wantToolTitle[tool.Name] {
				t.Errorf("tool %s: annotations %+v, want readOnlyHint and the title", tool.Name, tool.Annotations)
			}
			if tool.Name == "add" && (tool.OutputSchema != nil) != hasStructuredContent(rev) {
				t.Errorf("tool add: outputSchema %v at %s", tool.OutputSchema, rev)
			}
		}
		checkNames(t, "tools", names, wantTools)
	}},
	{"call echo", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": echoText}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || len(res.Content) != 1 {
			t.Fatalf("isError %v, %d content blocks; want one text block", res.IsError, len(res.Content))
		}
		if tc, ok := res.Content[0].(*gosdk.TextContent); !ok || tc.Text != echoText {
			t.Errorf("content %#v, want the text %q", res.Content[0], echoText)
		}
	}},
	{"call add for structured content", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3.5}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || len(res.Content) != 1 {
			t.Fatalf("isError %v, %d content blocks; want one text block", res.IsError, len(res.Content))
		}
		if tc, ok := res.Content[0].(*gosdk.TextContent); !ok || tc.Text != `{"sum":5.5}` {
			t.Errorf("content %#v, want the text {\"sum\":5.5}", res.Content[0])
		}
		got, _ := json.Marshal(res.StructuredContent)
		want := "null"
		if hasStructuredContent(rev) {
			want = `{"sum":5.5}`
		}
		if string(got) != want {
			t.Errorf("structuredContent %s, want %s at %s", got, want, rev)
		}
	}},
	{"call current_time with an unknown zone is a tool error", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "current_time", Arguments: map[string]any{"timezone": "Mars/Olympus_Mons"}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || len(res.Content) != 1 {
			t.Fatalf("isError %v with %d content blocks, want a tool error", res.IsError, len(res.Content))
		}
		if tc, ok := res.Content[0].(*gosdk.TextContent); !ok {
			t.Errorf("content %#v, want text", res.Content[0])
		} else {
			checkContains(t, "error text", tc.Text, "Mars/Olympus_Mons")
		}
	}},
	{"call add with a string for a number is a tool error", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "add", Arguments: map[string]any{"a": "two", "b": 3}})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || len(res.Content) != 1 {
			t.Fatalf("isError %v with %d content blocks, want a tool error", res.IsError, len(res.Content))
		}
		if tc, ok := res.Content[0].(*gosdk.TextContent); !ok {
			t.Errorf("content %#v, want text", res.Content[0])
		} else {
			checkContains(t, "error text", tc.Text, "/a")
		}
		if res.StructuredContent != nil {
			t.Errorf("structuredContent %v on a tool error", res.StructuredContent)
		}
	}},
	{"call an unknown tool is invalid params", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		_, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("error %v, want a JSON-RPC error with code %d", err, jsonrpc.CodeInvalidParams)
		}
		checkContains(t, "error message", werr.Message, "no_such_tool")
	}},
	{"list resources", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Resources) != len(wantResources) {
			t.Errorf("%d resources, want %d", len(res.Resources), len(wantResources))
		}
		for _, r := range res.Resources {
			want, ok := wantResources[r.URI]
			if !ok {
				t.Errorf("unexpected resource %q", r.URI)
				continue
			}
			if r.MIMEType != want.mime || r.Name == "" || r.Size == 0 {
				t.Errorf("resource %s: mimeType %q name %q size %d; want %q, a name and a size", r.URI, r.MIMEType, r.Name, r.Size, want.mime)
			}
			checkTitle(t, rev, "resource "+r.URI, r.Title, want.title)
		}
	}},
	{"read the text resource", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.ReadResource(ctx, &gosdk.ReadResourceParams{URI: readmeURI})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Contents) != 1 {
			t.Fatalf("%d contents, want 1", len(res.Contents))
		}
		c := res.Contents[0]
		if c.URI != readmeURI || c.MIMEType != "text/markdown" || c.Blob != nil {
			t.Errorf("contents uri %q mimeType %q blob %d bytes; want %s, text/markdown, text only", c.URI, c.MIMEType, len(c.Blob), readmeURI)
		}
		checkContains(t, "readme", c.Text, readmeHeading, "demo://notes/{id}")
	}},
	{"read the blob resource", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.ReadResource(ctx, &gosdk.ReadResourceParams{URI: logoURI})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Contents) != 1 {
			t.Fatalf("%d contents, want 1", len(res.Contents))
		}
		c := res.Contents[0]
		if c.URI != logoURI || c.MIMEType != "image/png" || c.Text != "" {
			t.Errorf("contents uri %q mimeType %q text %q; want %s, image/png, a blob only", c.URI, c.MIMEType, c.Text, logoURI)
		}
		if len(c.Blob) < len(pngSignature) || string(c.Blob[:len(pngSignature)]) != pngSignature {
			t.Errorf("blob %q… is not a PNG", c.Blob[:min(len(c.Blob), 16)])
		}
	}},
	{"list resource templates", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ResourceTemplates) != 1 {
			t.Fatalf("%d templates, want 1", len(res.ResourceTemplates))
		}
		rt := res.ResourceTemplates[0]
		if rt.URITemplate != noteTemplate || rt.Name != "note" || rt.MIMEType != "text/plain" {
			t.Errorf("template %+v, want uriTemplate %s named note, text/plain", rt, noteTemplate)
		}
		checkTitle(t, rev, "template", rt.Title, "Demo note")
	}},
	{"read a note through the template", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.ReadResource(ctx, &gosdk.ReadResourceParams{URI: welcomeURI})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Contents) != 1 || res.Contents[0].URI != welcomeURI {
			t.Fatalf("contents %+v, want one for %s", res.Contents, welcomeURI)
		}
		checkContains(t, "note", res.Contents[0].Text, welcomeText)
	}},
	{"read a missing note is resource not found", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		_, err := cs.ReadResource(ctx, &gosdk.ReadResourceParams{URI: missingNoteURI})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != resourceNotFound(rev) {
			t.Fatalf("error %v, want a JSON-RPC error with code %d", err, resourceNotFound(rev))
		}
		checkContains(t, "error data", string(werr.Data), missingNoteURI)
	}},
	{"list prompts", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range res.Prompts {
			names = append(names, p.Name)
			checkTitle(t, rev, "prompt "+p.Name, p.Title, wantPromptTitle[p.Name])
			if p.Name != "summarize" {
				continue
			}
			if len(p.Arguments) != 2 || p.Arguments[0].Name != "text" || !p.Arguments[0].Required || p.Arguments[1].Name != "style" || p.Arguments[1].Required {
				t.Errorf("summarize arguments %+v, want text (required) and style", p.Arguments)
				continue
			}
			checkTitle(t, rev, "argument text", p.Arguments[0].Title, "Text")
		}
		checkNames(t, "prompts", names, wantPrompts)
	}},
	{"get a prompt with arguments", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.GetPrompt(ctx, &gosdk.GetPromptParams{Name: "summarize", Arguments: map[string]string{"text": summarizeInput, "style": "bullet-points"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Description != "Summarize a text (bullet-points)" || len(res.Messages) != 1 {
			t.Fatalf("description %q with %d messages, want the bullet-points summary in one", res.Description, len(res.Messages))
		}
		m := res.Messages[0]
		tc, ok := m.Content.(*gosdk.TextContent)
		if m.Role != "user" || !ok {
			t.Fatalf("message %+v, want a user text", m)
		}
		checkContains(t, "prompt text", tc.Text, summarizeInput, summarizeAsk)
	}},
	{"get a prompt with an invalid argument is invalid params", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		_, err := cs.GetPrompt(ctx, &gosdk.GetPromptParams{Name: "summarize", Arguments: map[string]string{"text": summarizeInput, "style": "haiku"}})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("error %v, want a JSON-RPC error with code %d", err, jsonrpc.CodeInvalidParams)
		}
		checkContains(t, "error message", werr.Message, "haiku")
	}},
	{"complete a prompt argument", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.Complete(ctx, &gosdk.CompleteParams{
			Ref:      &gosdk.CompleteReference{Type: "ref/prompt", Name: "summarize"},
			Argument: gosdk.CompleteParamsArgument{Name: "style", Value: "b"},
		})
		if err != nil {
			t.Fatal(err)
		}
		checkNames(t, "completion values", res.Completion.Values, wantStyles)
		if res.Completion.Total != len(wantStyles) || res.Completion.HasMore {
			t.Errorf("total %d hasMore %v, want %d, false", res.Completion.Total, res.Completion.HasMore, len(wantStyles))
		}
	}},
	{"complete a template variable", func(ctx context.Context, t *testing.T, cs *gosdk.ClientSession, rev string) {
		res, err := cs.Complete(ctx, &gosdk.CompleteParams{
			Ref:      &gosdk.CompleteReference{Type: "ref/resource", URI: noteTemplate},
			Argument: gosdk.CompleteParamsArgument{Name: "id", Value: "S"},
		})
		if err != nil {
			t.Fatal(err)
		}
		checkNames(t, "completion values", res.Completion.Values, wantNoteIDs)
	}},
}
