package demo

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image/png"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fixedNow is the demo clock in tests: 2025-11-25T10:30:00Z.
var fixedNow = time.Date(2025, 11, 25, 10, 30, 0, 0, time.UTC)

func testNamespace() server.Namespace {
	return build(func() time.Time { return fixedNow }, time.Second)
}

func TestNewIsTheDemo(t *testing.T) {
	tools, err := New().ListTools(context.Background())
	if err != nil || len(tools) != 5 {
		t.Fatalf("New().ListTools() = %d tools, %v; want the 5 demo tools", len(tools), err)
	}
}

func TestCapabilities(t *testing.T) {
	got, _ := json.Marshal(testNamespace().Capabilities())
	want := `{"completions":{},"prompts":{"listChanged":false},"resources":{"listChanged":false},"tools":{"listChanged":false}}`
	if string(got) != want {
		t.Errorf("Capabilities() = %s, want %s", got, want)
	}
}

func TestToolsAreDescribed(t *testing.T) {
	tools, err := testNamespace().ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		var schema struct {
			Type                 string          `json:"type"`
			Properties           map[string]any  `json:"properties"`
			AdditionalProperties json.RawMessage `json:"additionalProperties"`
		}
		if err := json.Unmarshal(tl.InputSchema, &schema); err != nil {
			t.Fatalf("%s: inputSchema: %v", tl.Name, err)
		}
		if tl.Title == "" || tl.Description == "" || tl.Annotations == nil || schema.Type != "object" ||
			schema.Properties == nil || string(schema.AdditionalProperties) != "false" {
			t.Errorf("%s: want a title, description, annotations and a closed object inputSchema; got %+v", tl.Name, tl)
		}
	}
	if want := []string{"echo", "add", "current_time", "countdown", "introduce"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v in that order", names, want)
	}
}

func TestCallTool(t *testing.T) {
	tests := []struct {
		name           string
		tool           string
		args           string
		wantText       string // exact, unless wantErr
		wantStructured string // exact JSON, when the tool has an outputSchema
		wantErr        bool   // isError result
	}{
		{name: "echo returns its text", tool: "echo", args: `{"text":"hello, mcpx"}`, wantText: "hello, mcpx"},
		{name: "echo keeps an empty text", tool: "echo", args: `{"text":""}`, wantText: ""},
		{name: "echo without text is a tool error", tool: "echo", args: `{}`, wantErr: true, wantText: "text"},
		{name: "echo rejects unknown arguments", tool: "echo", args: `{"text":"a","loud":true}`, wantErr: true, wantText: "loud"},
		{name: "add sums integers", tool: "add", args: `{"a":2,"b":3}`, wantText: `{"sum":5}`, wantStructured: `{"sum":5}`},
		{name: "add sums fractions and negatives", tool: "add", args: `{"a":-1.5,"b":0.25}`, wantText: `{"sum":-1.25}`, wantStructured: `{"sum":-1.25}`},
		{name: "add with a string is a tool error", tool: "add", args: `{"a":"2","b":3}`, wantErr: true, wantText: "/a"},
		{name: "current_time defaults to UTC", tool: "current_time", args: `{}`,
			wantStructured: `{"time":"2025-11-25T10:30:00Z","timezone":"UTC","unix":1764066600}`},
		{name: "current_time converts to a zone", tool: "current_time", args: `{"timezone":"Asia/Tokyo"}`,
			wantStructured: `{"time":"2025-11-25T19:30:00+09:00","timezone":"Asia/Tokyo","unix":1764066600}`},
		{name: "current_time rejects an unknown zone", tool: "current_time", args: `{"timezone":"Mars/Olympus_Mons"}`, wantErr: true, wantText: "unknown time zone"},
		{name: "current_time rejects the host's Local zone", tool: "current_time", args: `{"timezone":"Local"}`, wantErr: true, wantText: "unknown time zone"},
		{name: "countdown rejects more than ten seconds", tool: "countdown", args: `{"seconds":11}`, wantErr: true, wantText: "/seconds"},
		{name: "countdown rejects a fraction", tool: "countdown", args: `{"seconds":1.5}`, wantErr: true, wantText: "/seconds"},
	}
	ns := testNamespace()
	tools, _ := ns.ListTools(context.Background())
	outputs := map[string]*jsonschema.Schema{}
	for _, tl := range tools {
		if len(tl.OutputSchema) > 0 {
			outputs[tl.Name] = compile(t, tl.OutputSchema)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ns.CallTool(context.Background(), &mcp.CallToolRequestParams{Name: tt.tool, Arguments: json.RawMessage(tt.args)})
			if err != nil {
				t.Fatalf("CallTool = %v, want a result", err)
			}
			isErr := res.IsError != nil && *res.IsError
			text := onlyText(t, res.Content)
			switch {
			case isErr != tt.wantErr:
				t.Fatalf("isError = %v, want %v (text %q)", isErr, tt.wantErr, text)
			case tt.wantErr && !strings.Contains(text, tt.wantText):
				t.Errorf("error text %q does not mention %q", text, tt.wantText)
			case !tt.wantErr && tt.wantStructured == "" && text != tt.wantText:
				t.Errorf("text = %q, want %q", text, tt.wantText)
			}
			if tt.wantStructured != "" {
				if string(res.StructuredContent) != tt.wantStructured || text != tt.wantStructured {
					t.Errorf("structured %s, text %q; want both %s", res.StructuredContent, text, tt.wantStructured)
				}
				inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(res.StructuredContent))
				if err := outputs[tt.tool].Validate(inst); err != nil {
					t.Errorf("structured content breaks the outputSchema: %v", err)
				}
			}
		})
	}
}

func compile(t *testing.T, raw json.RawMessage) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("schema.json", doc); err != nil {
		t.Fatal(err)
	}
	return c.MustCompile("schema.json")
}

func onlyText(t *testing.T, content []mcp.ContentBlock) string {
	t.Helper()
	if len(content) != 1 {
		t.Fatalf("%d content blocks, want 1", len(content))
	}
	tc, ok := content[0].Value.(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", content[0].Value)
	}
	return tc.Text
}

// recorder is a [server.Notifier] that asked for progress and every log
// level, and keeps what it was sent.
type recorder struct {
	mu   sync.Mutex
	sent []any
}

func (r *recorder) Notify(method string, params any) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, params)
	return true
}
func (r *recorder) ProgressToken() json.RawMessage { return json.RawMessage(`"tok"`) }
func (r *recorder) LogLevel() mcp.LoggingLevel     { return mcp.LoggingLevelDebug }

func TestCountdown(t *testing.T) {
	tests := []struct {
		name        string
		args        string
		cancelAfter time.Duration // 0: run to the end
		wantText    string
		wantProg    []float64
		wantTook    time.Duration
	}{
		{name: "the default counts three seconds", args: `{}`, wantText: "Liftoff after 3 seconds.",
			wantProg: []float64{0, 1, 2, 3}, wantTook: 3 * time.Second},
		{name: "one second", args: `{"seconds":1}`, wantText: "Liftoff after 1 second.",
			wantProg: []float64{0, 1}, wantTook: time.Second},
		{name: "cancellation stops it between steps", args: `{"seconds":10}`, cancelAfter: 2500 * time.Millisecond,
			wantProg: []float64{0, 1, 2}, wantTook: 2500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := &recorder{}
				ctx, cancel := context.WithCancel(server.WithNotifier(context.Background(), rec))
				defer cancel()
				if tt.cancelAfter > 0 {
					time.AfterFunc(tt.cancelAfter, cancel)
				}
				start := time.Now()
				res, err := testNamespace().CallTool(ctx, &mcp.CallToolRequestParams{Name: "countdown", Arguments: json.RawMessage(tt.args)})
				if took := time.Since(start); took != tt.wantTook {
					t.Errorf("took %v, want %v", took, tt.wantTook)
				}
				if tt.cancelAfter > 0 {
					if !errors.Is(err, context.Canceled) {
						t.Errorf("cancelled countdown = %v, %v; want context.Canceled", res, err)
					}
				} else if err != nil || onlyText(t, res.Content) != tt.wantText {
					t.Errorf("countdown = %v, %v; want %q", res, err, tt.wantText)
				}
				var prog []float64
				logs := 0
				for _, p := range rec.sent {
					switch p := p.(type) {
					case *mcp.ProgressNotificationParams:
						prog = append(prog, p.Progress)
					case *mcp.LoggingMessageNotificationParams:
						logs++
					}
				}
				if !slices.Equal(prog, tt.wantProg) || logs != 0 {
					t.Errorf("progress %v and %d logs, want %v and none (mcpx's own namespaces never log to clients)", prog, logs, tt.wantProg)
				}
			})
		})
	}
}

func TestResources(t *testing.T) {
	ns := testNamespace()
	ctx := context.Background()
	list, err := ns.ListResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list {
		uris = append(uris, r.URI)
		if r.Name == "" || r.Title == "" || r.Description == "" || r.MIMEType == "" || r.Size == nil {
			t.Errorf("resource %s is not fully described: %+v", r.URI, r)
		}
	}
	if want := []string{"demo://readme", "demo://logo.png"}; !slices.Equal(uris, want) {
		t.Errorf("resources = %v, want %v", uris, want)
	}
	temps, err := ns.ListResourceTemplates(ctx)
	if err != nil || len(temps) != 1 || temps[0].URITemplate != "demo://notes/{id}" {
		t.Errorf("templates = %+v, %v; want demo://notes/{id}", temps, err)
	}

	tests := []struct {
		name     string
		uri      string
		wantMIME string
		check    func(t *testing.T, c mcp.ReadResourceResultContentsItemValue)
		notFound bool
	}{
		{name: "the readme is markdown about the demo", uri: "demo://readme", wantMIME: "text/markdown", check: func(t *testing.T, c mcp.ReadResourceResultContentsItemValue) {
			text := c.(*mcp.TextResourceContents).Text
			for _, want := range []string{"echo", "countdown", "demo://notes/{id}", "summarize"} {
				if !strings.Contains(text, want) {
					t.Errorf("readme does not mention %q", want)
				}
			}
			if int64(len(text)) != *list[0].Size {
				t.Errorf("readme is %d bytes, listed as %d", len(text), *list[0].Size)
			}
		}},
		{name: "the logo is a 16×16 PNG", uri: "demo://logo.png", wantMIME: "image/png", check: func(t *testing.T, c mcp.ReadResourceResultContentsItemValue) {
			b, err := base64.StdEncoding.DecodeString(c.(*mcp.BlobResourceContents).Blob)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil || img.Bounds().Dx() != 16 || img.Bounds().Dy() != 16 {
				t.Errorf("logo decodes to %v, %v; want a 16×16 image", img, err)
			}
			if int64(len(b)) != *list[1].Size {
				t.Errorf("logo is %d bytes, listed as %d", len(b), *list[1].Size)
			}
		}},
		{name: "the welcome note", uri: "demo://notes/welcome", wantMIME: "text/plain", check: wantText("Welcome to mcpx")},
		{name: "the shopping list", uri: "demo://notes/shopping-list", wantMIME: "text/plain", check: wantText("coffee")},
		{name: "the ideas", uri: "demo://notes/ideas", wantMIME: "text/plain", check: wantText("Nap.")},
		{name: "an unknown note is not found", uri: "demo://notes/diary", notFound: true},
		{name: "an unknown resource is not found", uri: "demo://nothing", notFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ns.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: tt.uri})
			if tt.notFound {
				var nf *server.ResourceNotFoundError
				if !errors.As(err, &nf) || nf.URI != tt.uri {
					t.Errorf("ReadResource(%s) = %v, want ResourceNotFoundError", tt.uri, err)
				}
				return
			}
			if err != nil || len(res.Contents) != 1 {
				t.Fatalf("ReadResource(%s) = %+v, %v; want one item", tt.uri, res, err)
			}
			uri, mime := contentsMeta(res.Contents[0].Value)
			if uri != tt.uri || mime != tt.wantMIME {
				t.Errorf("contents at %q as %q, want %q as %q", uri, mime, tt.uri, tt.wantMIME)
			}
			tt.check(t, res.Contents[0].Value)
		})
	}
}

func wantText(sub string) func(*testing.T, mcp.ReadResourceResultContentsItemValue) {
	return func(t *testing.T, c mcp.ReadResourceResultContentsItemValue) {
		if text := c.(*mcp.TextResourceContents).Text; !strings.Contains(text, sub) {
			t.Errorf("text %q does not contain %q", text, sub)
		}
	}
}

func contentsMeta(c mcp.ReadResourceResultContentsItemValue) (uri, mime string) {
	switch c := c.(type) {
	case *mcp.TextResourceContents:
		return c.URI, c.MIMEType
	case *mcp.BlobResourceContents:
		return c.URI, c.MIMEType
	}
	return "", ""
}

func TestPrompts(t *testing.T) {
	ns := testNamespace()
	ctx := context.Background()
	list, err := ns.ListPrompts(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "summarize" || list[1].Name != "greeting" {
		t.Fatalf("prompts = %+v, %v; want summarize, greeting", list, err)
	}
	tests := []struct {
		name      string
		prompt    string
		args      map[string]string
		wantText  []string // substrings of the one user message
		wantError string   // substring of an InvalidParamsError
	}{
		{name: "summarize defaults to brief", prompt: "summarize", args: map[string]string{"text": "MCP is a protocol."},
			wantText: []string{"two or three sentences", "MCP is a protocol."}},
		{name: "summarize in detail", prompt: "summarize", args: map[string]string{"text": "x", "style": "detailed"},
			wantText: []string{"few paragraphs"}},
		{name: "summarize as bullet points", prompt: "summarize", args: map[string]string{"text": "x", "style": "bullet-points"},
			wantText: []string{"bulleted list"}},
		{name: "summarize rejects an unknown style, listing the valid ones", prompt: "summarize", args: map[string]string{"text": "x", "style": "haiku"},
			wantError: "brief, detailed, bullet-points"},
		{name: "summarize needs text", prompt: "summarize", args: map[string]string{"style": "brief"}, wantError: `"text"`},
		{name: "greeting names the person", prompt: "greeting", args: map[string]string{"name": "Grace"}, wantText: []string{"greeting for Grace"}},
		{name: "greeting needs a name", prompt: "greeting", wantError: `"name"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ns.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: tt.prompt, Arguments: tt.args})
			if tt.wantError != "" {
				var ip *server.InvalidParamsError
				if !errors.As(err, &ip) || !strings.Contains(err.Error(), tt.wantError) {
					t.Errorf("GetPrompt = %v, want an InvalidParamsError mentioning %s", err, tt.wantError)
				}
				return
			}
			if err != nil || len(res.Messages) != 1 || res.Messages[0].Role != mcp.RoleUser {
				t.Fatalf("GetPrompt = %+v, %v; want one user message", res, err)
			}
			text := res.Messages[0].Content.Value.(*mcp.TextContent).Text
			for _, w := range tt.wantText {
				if !strings.Contains(text, w) {
					t.Errorf("message %q does not contain %q", text, w)
				}
			}
		})
	}
}

func TestComplete(t *testing.T) {
	prompt := func(name string) mcp.CompleteRequestParamsRef {
		return mcp.CompleteRequestParamsRef{Value: &mcp.PromptReference{Name: name}}
	}
	notes := mcp.CompleteRequestParamsRef{Value: &mcp.ResourceTemplateReference{URI: "demo://notes/{id}"}}
	tests := []struct {
		name  string
		ref   mcp.CompleteRequestParamsRef
		arg   string
		value string
		want  []string
	}{
		{"summarize styles by prefix", prompt("summarize"), "style", "b", []string{"brief", "bullet-points"}},
		{"every style for an empty value", prompt("summarize"), "style", "", []string{"brief", "detailed", "bullet-points"}},
		{"summarize text has no suggestions", prompt("summarize"), "text", "", []string{}},
		{"greeting names ignore case", prompt("greeting"), "name", "a", []string{"Ada", "Alan"}},
		{"note ids", notes, "id", "s", []string{"shopping-list"}},
		{"no note id matches", notes, "id", "zzz", []string{}},
	}
	ns := testNamespace()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ns.Complete(context.Background(), &mcp.CompleteRequestParams{
				Ref: tt.ref, Argument: mcp.CompleteRequestParamsArgument{Name: tt.arg, Value: tt.value},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Completion.Values; got == nil || !slices.Equal(got, tt.want) {
				t.Errorf("values = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// TestIntroduceAsks: introduce asks a 2026-07-28 client its name in an
// input_required round and greets it on the retry; a client without MRTR
// gets a tool error saying it could not be asked.
func TestIntroduceAsks(t *testing.T) {
	ns := testNamespace()
	ctx := server.WithTakesInputRequired(context.Background(), true)
	_, err := ns.CallTool(ctx, &mcp.CallToolRequestParams{Name: "introduce"})
	var ir *server.InputRequired
	if !errors.As(err, &ir) || ir.Result.RequestState == "" {
		t.Fatalf("first call: %v; want input_required with a state", err)
	}
	q, ok := ir.Result.InputRequests["name"].Value.(*mcp.ElicitRequest)
	if !ok || q.Params.Value.(*mcp.ElicitRequestFormParams).Message != "What is your name?" {
		t.Fatalf("asked %+v; want the name form", ir.Result.InputRequests)
	}
	r, err := ns.CallTool(ctx, &mcp.CallToolRequestParams{Name: "introduce", RequestState: ir.Result.RequestState,
		InputResponses: map[string]mcp.InputResponse{"name": {Value: &mcp.ElicitResult{Action: "accept", Content: json.RawMessage(`{"name":" Ada "}`)}}}})
	if err != nil || r.Content[0].Value.(*mcp.TextContent).Text != "Hello, Ada! Nice to meet you." {
		t.Fatalf("retry = %+v, %v", r, err)
	}
	r, err = ns.CallTool(context.Background(), &mcp.CallToolRequestParams{Name: "introduce"})
	if err != nil || r.IsError == nil || !strings.Contains(r.Content[0].Value.(*mcp.TextContent).Text, "could not be asked") {
		t.Fatalf("legacy = %+v, %v; want a tool error", r, err)
	}
}
