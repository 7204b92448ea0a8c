package peertest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// mcpGoRevisions are the revisions in the tables mcp-go v1.2.1 can be
// pinned to, oldest first (see mcpGoClient).
var mcpGoRevisions = revisionsOf(mcpGoClient)

// connectMCPGo starts mcpx over transport, connects an mcp-go client
// pinned to rev, and records the wire for validation when the test ends.
func connectMCPGo(t *testing.T, transportName, rev string) (*client.Client, *mcpgo.InitializeResult, *mcpxConn) {
	m := startMCPX(t, transportName, rev)
	var tr transport.Interface
	if m.proc != nil {
		tr = transport.NewIO(m.proc.Stdout, m.proc.Stdin, nil)
	} else {
		var logs wiretest.LockedBuffer
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("mcp-go log:\n%s", logs.String())
			}
		})
		h, err := transport.NewStreamableHTTP(m.url, transport.WithHTTPBasicClient(m.client),
			transport.WithHTTPLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		if err != nil {
			t.Fatal(err)
		}
		tr = h
	}
	c := client.NewClient(tr, client.WithProtocolVersion(rev))
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("mcp-go Client.Close: %v", err)
		}
	})
	if err := c.Start(t.Context()); err != nil {
		t.Fatalf("mcp-go Start over %s: %v", transportName, err)
	}
	init, err := c.Initialize(t.Context(), mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: "peertest-mcp-go", Version: "1.0.0"},
	}})
	if err != nil {
		t.Fatalf("mcp-go Initialize pinned to %s over %s: %v", rev, transportName, err)
	}
	return c, init, m
}

// TestMCPGo runs the mcp-go client pinned to every revision over both
// transports through every demo feature.
func TestMCPGo(t *testing.T) {
	t.Parallel()
	for _, transportName := range transports {
		for _, rev := range mcpGoRevisions {
			t.Run(fmt.Sprintf("over %s pinned to %s", transportName, rev), func(t *testing.T) {
				t.Parallel()
				c, init, _ := connectMCPGo(t, transportName, rev)
				for _, step := range mcpGoSteps {
					t.Run(step.name, func(t *testing.T) { step.run(t.Context(), t, mcpGoSession{c, init}, rev) })
				}
			})
		}
	}
}

type mcpGoSession struct {
	c    *client.Client
	init *mcpgo.InitializeResult
}

// text is the only content block of a result, which must be text.
func mcpGoText(t *testing.T, content []mcpgo.Content) string {
	t.Helper()
	if len(content) != 1 {
		t.Fatalf("%d content blocks, want one", len(content))
	}
	tc, ok := mcpgo.AsTextContent(content[0])
	if !ok {
		t.Fatalf("content %#v, want text", content[0])
	}
	return tc.Text
}

var mcpGoSteps = []struct {
	name string
	run  func(ctx context.Context, t *testing.T, s mcpGoSession, rev string)
}{
	{"initialize negotiates the pinned revision", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		if s.init.ProtocolVersion != rev || s.c.ProtocolVersion() != rev {
			t.Errorf("protocolVersion %q (client says %q), want the pinned %q", s.init.ProtocolVersion, s.c.ProtocolVersion(), rev)
		}
		if s.init.ServerInfo.Name != serverInfo.Name || s.init.ServerInfo.Version == "" {
			t.Errorf("serverInfo %+v, want name %q and a version", s.init.ServerInfo, serverInfo.Name)
		}
		checkTitle(t, rev, "serverInfo", s.init.ServerInfo.Title, serverInfo.Title)
		caps := s.init.Capabilities
		if caps.Tools == nil || caps.Resources == nil || caps.Prompts == nil {
			t.Fatalf("capabilities %+v, want tools, resources and prompts", caps)
		}
		if got, want := caps.Completions != nil, hasCompletions(rev); got != want {
			t.Errorf("completions capability present: %v, want %v at %s", got, want, rev)
		}
	}},
	{"ping", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		if !hasPing(rev) {
			t.Skipf("%s has no ping", rev)
		}
		if err := s.c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}},
	{"list tools", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		res, err := s.c.ListTools(ctx, mcpgo.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			checkTitle(t, rev, "tool "+tool.Name, tool.Title, wantToolTitle[tool.Name])
			if tool.Description == "" || tool.InputSchema.Type != "object" {
				t.Errorf("tool %s: description %q, inputSchema type %q; want a description and an object schema", tool.Name, tool.Description, tool.InputSchema.Type)
			}
			a := tool.Annotations
			if !hasAnnotations(rev) {
				if a != (mcpgo.ToolAnnotation{}) {
					t.Errorf("tool %s: annotations %+v at %s, which has none", tool.Name, a, rev)
				}
			} else if a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.Title != wantToolTitle[tool.Name] {
				t.Errorf("tool %s: annotations %+v, want readOnlyHint and the title", tool.Name, a)
			}
			if tool.Name == "add" && (tool.OutputSchema.Type != "") != hasStructuredContent(rev) {
				t.Errorf("tool add: outputSchema %+v at %s", tool.OutputSchema, rev)
			}
		}
		checkNames(t, "tools", names, wantTools)
	}},
	{"call echo", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "echo"
		req.Params.Arguments = map[string]any{"text": echoText}
		res, err := s.c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Errorf("isError, want a result")
		}
		if got := mcpGoText(t, res.Content); got != echoText {
			t.Errorf("text %q, want %q", got, echoText)
		}
	}},
	{"call add for structured content", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "add"
		req.Params.Arguments = map[string]any{"a": 2, "b": 3.5}
		res, err := s.c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if got := mcpGoText(t, res.Content); res.IsError || got != `{"sum":5.5}` {
			t.Errorf("isError %v text %q, want {\"sum\":5.5}", res.IsError, got)
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
	{"call current_time with an unknown zone is a tool error", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "current_time"
		req.Params.Arguments = map[string]any{"timezone": "Mars/Olympus_Mons"}
		res, err := s.c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			t.Errorf("no isError, want a tool error")
		}
		checkContains(t, "error text", mcpGoText(t, res.Content), "Mars/Olympus_Mons")
	}},
	{"call add with a string for a number is a tool error", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "add"
		req.Params.Arguments = map[string]any{"a": "two", "b": 3}
		res, err := s.c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || res.StructuredContent != nil {
			t.Errorf("isError %v structuredContent %v, want a tool error", res.IsError, res.StructuredContent)
		}
		checkContains(t, "error text", mcpGoText(t, res.Content), "/a")
	}},
	{"call an unknown tool is invalid params", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "no_such_tool"
		_, err := s.c.CallTool(ctx, req)
		if !errors.Is(err, mcpgo.ErrInvalidParams) {
			t.Fatalf("error %v, want %v", err, mcpgo.ErrInvalidParams)
		}
	}},
	{"list resources", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		res, err := s.c.ListResources(ctx, mcpgo.ListResourcesRequest{})
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
			if r.MIMEType != want.mime || r.Name == "" || r.Size == nil || *r.Size == 0 {
				t.Errorf("resource %s: mimeType %q name %q size %v; want %q, a name and a size", r.URI, r.MIMEType, r.Name, r.Size, want.mime)
			}
			checkTitle(t, rev, "resource "+r.URI, r.Title, want.title)
		}
	}},
	{"read the text resource", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = readmeURI
		res, err := s.c.ReadResource(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Contents) != 1 {
			t.Fatalf("%d contents, want 1", len(res.Contents))
		}
		c, ok := mcpgo.AsTextResourceContents(res.Contents[0])
		if !ok {
			t.Fatalf("contents %#v, want text", res.Contents[0])
		}
		if c.URI != readmeURI || c.MIMEType != "text/markdown" {
			t.Errorf("contents uri %q mimeType %q; want %s, text/markdown", c.URI, c.MIMEType, readmeURI)
		}
		checkContains(t, "readme", c.Text, readmeHeading, "demo://notes/{id}")
	}},
	{"read the blob resource", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = logoURI
		res, err := s.c.ReadResource(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Contents) != 1 {
			t.Fatalf("%d contents, want 1", len(res.Contents))
		}
		c, ok := mcpgo.AsBlobResourceContents(res.Contents[0])
		if !ok {
			t.Fatalf("contents %#v, want a blob", res.Contents[0])
		}
		if c.URI != logoURI || c.MIMEType != "image/png" {
			t.Errorf("contents uri %q mimeType %q; want %s, image/png", c.URI, c.MIMEType, logoURI)
		}
		png, err := base64.StdEncoding.DecodeString(c.Blob)
		if err != nil || len(png) < len(pngSignature) || string(png[:len(pngSignature)]) != pngSignature {
			t.Errorf("blob %.24q… (%v) is not a base64 PNG", c.Blob, err)
		}
	}},
	{"list resource templates", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		res, err := s.c.ListResourceTemplates(ctx, mcpgo.ListResourceTemplatesRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.ResourceTemplates) != 1 {
			t.Fatalf("%d templates, want 1", len(res.ResourceTemplates))
		}
		rt := res.ResourceTemplates[0]
		if rt.URITemplate == nil || rt.URITemplate.Raw() != noteTemplate || rt.Name != "note" || rt.MIMEType != "text/plain" {
			t.Errorf("template %+v, want uriTemplate %s named note, text/plain", rt, noteTemplate)
		}
		checkTitle(t, rev, "template", rt.Title, "Demo note")
	}},
	{"read a note through the template", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = welcomeURI
		res, err := s.c.ReadResource(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Contents) != 1 {
			t.Fatalf("%d contents, want 1", len(res.Contents))
		}
		c, ok := mcpgo.AsTextResourceContents(res.Contents[0])
		if !ok || c.URI != welcomeURI {
			t.Fatalf("contents %#v, want text for %s", res.Contents[0], welcomeURI)
		}
		checkContains(t, "note", c.Text, welcomeText)
	}},
	{"read a missing note is resource not found", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = missingNoteURI
		_, err := s.c.ReadResource(ctx, req)
		want := mcpgo.ErrResourceNotFound
		if resourceNotFound(rev) == mcpgo.INVALID_PARAMS {
			want = mcpgo.ErrInvalidParams
		}
		if !errors.Is(err, want) {
			t.Fatalf("error %v, want %v", err, want)
		}
	}},
	{"list prompts", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		res, err := s.c.ListPrompts(ctx, mcpgo.ListPromptsRequest{})
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
	{"get a prompt with arguments", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		req := mcpgo.GetPromptRequest{}
		req.Params.Name = "summarize"
		req.Params.Arguments = map[string]string{"text": summarizeInput, "style": "bullet-points"}
		res, err := s.c.GetPrompt(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Description != "Summarize a text (bullet-points)" || len(res.Messages) != 1 {
			t.Fatalf("description %q with %d messages, want the bullet-points summary in one", res.Description, len(res.Messages))
		}
		m := res.Messages[0]
		tc, ok := mcpgo.AsTextContent(m.Content)
		if m.Role != mcpgo.RoleUser || !ok {
			t.Fatalf("message %+v, want a user text", m)
		}
		checkContains(t, "prompt text", tc.Text, summarizeInput, summarizeAsk)
	}},
	{"get a prompt with an invalid argument is invalid params", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		req := mcpgo.GetPromptRequest{}
		req.Params.Name = "summarize"
		req.Params.Arguments = map[string]string{"text": summarizeInput, "style": "haiku"}
		_, err := s.c.GetPrompt(ctx, req)
		if !errors.Is(err, mcpgo.ErrInvalidParams) {
			t.Fatalf("error %v, want %v", err, mcpgo.ErrInvalidParams)
		}
	}},
	{"complete a prompt argument", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		req := mcpgo.CompleteRequest{}
		req.Params.Ref = mcpgo.PromptReference{Type: "ref/prompt", Name: "summarize"}
		req.Params.Argument = mcpgo.CompleteArgument{Name: "style", Value: "b"}
		res, err := s.c.Complete(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		checkNames(t, "completion values", res.Completion.Values, wantStyles)
		if res.Completion.Total != len(wantStyles) || res.Completion.HasMore {
			t.Errorf("total %d hasMore %v, want %d, false", res.Completion.Total, res.Completion.HasMore, len(wantStyles))
		}
	}},
	{"complete a template variable", func(ctx context.Context, t *testing.T, s mcpGoSession, rev string) {
		req := mcpgo.CompleteRequest{}
		req.Params.Ref = mcpgo.ResourceReference{Type: "ref/resource", URI: noteTemplate}
		req.Params.Argument = mcpgo.CompleteArgument{Name: "id", Value: "S"}
		res, err := s.c.Complete(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		checkNames(t, "completion values", res.Completion.Values, wantNoteIDs)
	}},
}
