// Package demo is the namespace mcpx serves when it has no configuration,
// so that a new user's client has something to list, call, read and
// complete before any upstream server is set up. It shows one of each MCP
// feature a client is likely to display:
//
//   - tools: echo, add (structured output with an outputSchema),
//     current_time (an optional argument, a tool error for a bad one),
//     countdown (progress notifications and cancellation) and introduce
//     (asks the user their name: an elicitation form, as an input_required
//     round to a 2026-07-28 client);
//   - resources: demo://readme (text) and demo://logo.png (binary);
//   - a resource template, demo://notes/{id}, over three notes;
//   - prompts: summarize (a required and an optional argument) and greeting;
//   - completion for the prompts' arguments and the template's id.
//
// Everything is deterministic except the clock, which tests replace.
package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"time"
	_ "time/tzdata" // current_time must know every IANA zone even where the host has no zoneinfo

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/catalog"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// New returns the demo namespace.
//
// It declares no logging capability and its tools send no log messages:
// mcpx sends clients no notifications/message of its own
// (docs/revisions.md#log-messages).
func New() server.Namespace { return NewWith(nil) }

// NewWith returns the demo namespace, sealing the requestState of
// introduce's rounds with states (nil: a key of the process's own).
func NewWith(states *requeststate.Sealer) server.Namespace {
	c := build(time.Now, time.Second)
	c.asker.States = states
	return c
}

// demo is the catalog and the asker its introduce tool asks through.
type demo struct {
	*catalog.Catalog
	asker *catalog.Asker
}

// build assembles the demo around a clock and the length of one countdown
// step, the two things tests replace.
func build(now func() time.Time, tick time.Duration) *demo {
	c := &demo{Catalog: catalog.New(), asker: &catalog.Asker{Namespace: "demo"}}
	addTools(c.Catalog, now, tick)
	addIntroduce(c.Catalog, c.asker)
	addResources(c.Catalog)
	addPrompts(c.Catalog)
	c.SetCompletion(complete)
	return c
}

// readOnly marks a tool that changes nothing and reaches nothing outside
// mcpx, so clients may call it without asking the user.
func readOnly(title string, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{
		Title:           title,
		ReadOnlyHint:    mcp.Ptr(true),
		DestructiveHint: mcp.Ptr(false),
		IdempotentHint:  mcp.Ptr(idempotent),
		OpenWorldHint:   mcp.Ptr(false),
	}
}

func addTools(c *catalog.Catalog, now func() time.Time, tick time.Duration) {
	c.AddTool(mcp.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns the given text unchanged. Use it to check that tool calls reach mcpx and come back.",
		InputSchema: []byte(`{
			"type": "object",
			"properties": {
				"text": {"type": "string", "description": "The text to send back."}
			},
			"required": ["text"],
			"additionalProperties": false
		}`),
		Annotations: readOnly("Echo", true),
	}, catalog.Typed(func(_ context.Context, in struct{ Text string }) (*mcp.CallToolResult, error) {
		return catalog.TextResult(in.Text), nil
	}))

	c.AddTool(mcp.Tool{
		Name:        "add",
		Title:       "Add two numbers",
		Description: "Adds two numbers and returns the sum, both as text and as structured content matching the output schema.",
		InputSchema: []byte(`{
			"type": "object",
			"properties": {
				"a": {"type": "number", "description": "The first addend."},
				"b": {"type": "number", "description": "The second addend."}
			},
			"required": ["a", "b"],
			"additionalProperties": false
		}`),
		OutputSchema: []byte(`{
			"type": "object",
			"properties": {
				"sum": {"type": "number", "description": "a + b"}
			},
			"required": ["sum"],
			"additionalProperties": false
		}`),
		Annotations: readOnly("Add two numbers", true),
	}, catalog.Typed(func(_ context.Context, in struct{ A, B float64 }) (*mcp.CallToolResult, error) {
		return catalog.StructuredResult(struct {
			Sum float64 `json:"sum"`
		}{in.A + in.B})
	}))

	c.AddTool(mcp.Tool{
		Name:        "current_time",
		Title:       "Current time",
		Description: "Returns the current date and time in an IANA time zone (UTC when none is given).",
		InputSchema: []byte(`{
			"type": "object",
			"properties": {
				"timezone": {"type": "string", "description": "An IANA time zone name such as \"Europe/Paris\" or \"America/New_York\". Defaults to UTC."}
			},
			"additionalProperties": false
		}`),
		OutputSchema: []byte(`{
			"type": "object",
			"properties": {
				"time": {"type": "string", "format": "date-time", "description": "The time in RFC 3339 form, with the zone's offset."},
				"timezone": {"type": "string", "description": "The time zone used."},
				"unix": {"type": "integer", "description": "Seconds since 1970-01-01T00:00:00Z."}
			},
			"required": ["time", "timezone", "unix"],
			"additionalProperties": false
		}`),
		Annotations: readOnly("Current time", false),
	}, catalog.Typed(func(_ context.Context, in struct{ Timezone string }) (*mcp.CallToolResult, error) {
		zone := in.Timezone
		if zone == "" {
			zone = "UTC"
		}
		loc, err := time.LoadLocation(zone)
		if err != nil || zone == "Local" {
			return catalog.ErrorResult("unknown time zone %q: give an IANA name such as \"Europe/Paris\", or none for UTC", in.Timezone), nil
		}
		t := now().In(loc)
		return catalog.StructuredResult(struct {
			Time     string `json:"time"`
			Timezone string `json:"timezone"`
			Unix     int64  `json:"unix"`
		}{t.Format(time.RFC3339), zone, t.Unix()})
	}))

	c.AddTool(mcp.Tool{
		Name:  "countdown",
		Title: "Countdown",
		Description: "Counts down from the given number of seconds, one step a second, reporting progress at each step. " +
			"Shows progress notifications and cancellation.",
		InputSchema: []byte(`{
			"type": "object",
			"properties": {
				"seconds": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3, "description": "How many seconds to count down, 1 to 10."}
			},
			"additionalProperties": false
		}`),
		Annotations: readOnly("Countdown", true),
	}, catalog.Typed(func(ctx context.Context, in struct{ Seconds int }) (*mcp.CallToolResult, error) {
		n := in.Seconds
		if n == 0 {
			n = 3
		}
		for i := range n {
			server.Progress(ctx, float64(i), float64(n), fmt.Sprintf("%d…", n-i))
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(tick):
			}
		}
		server.Progress(ctx, float64(n), float64(n), "liftoff")
		if n == 1 {
			return catalog.TextResult("Liftoff after 1 second."), nil
		}
		return catalog.TextResult(fmt.Sprintf("Liftoff after %d seconds.", n)), nil
	}))
}

// addIntroduce adds introduce, the tool that asks the user a question.
func addIntroduce(c *catalog.Catalog, a *catalog.Asker) {
	c.AddTool(mcp.Tool{
		Name:  "introduce",
		Title: "Introduce yourself",
		Description: "Asks the user their name (an elicitation form) and greets them. " +
			"Shows a tool asking the user something: a 2026-07-28 client gets an input_required result and retries with the answer.",
		InputSchema: []byte(`{"type": "object", "properties": {}, "additionalProperties": false}`),
		Annotations: readOnly("Introduce yourself", false),
	}, func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
		answers, err := a.Ask(ctx, map[string]mcp.InputRequest{"name": {Value: &mcp.ElicitRequest{
			Params: mcp.ElicitRequestParams{Value: &mcp.ElicitRequestFormParams{
				Message:         "What is your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Your name"}},"required":["name"]}`),
			}},
		}}})
		if errors.As(err, new(*server.InputRequired)) || errors.As(err, new(*server.InvalidParamsError)) {
			return nil, err // the round, or a refused answer: the edge answers them
		}
		if err != nil {
			return catalog.ErrorResult("introduce needs to ask you your name (elicitation/create), and the client could not be asked: %v", err), nil
		}
		r, _ := answers["name"].Value.(*mcp.ElicitResult)
		if r == nil || r.Action != "accept" {
			return catalog.TextResult("Hello, whoever you are!"), nil
		}
		var in struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(r.Content, &in); err != nil || strings.TrimSpace(in.Name) == "" {
			return catalog.TextResult("Hello, whoever you are!"), nil
		}
		return catalog.TextResult("Hello, " + strings.TrimSpace(in.Name) + "! Nice to meet you."), nil
	})
}

const readme = `# The mcpx demo namespace

mcpx serves this namespace when it has no configuration, so your client has
something to talk to. Try:

- **Tools**: ` + "`echo`" + `, ` + "`add`" + ` (structured output), ` + "`current_time`" + `
  (pass a time zone such as Europe/Paris), ` + "`countdown`" + ` (progress
  notifications; cancel it half way) and ` + "`introduce`" + ` (asks your name).
- **Resources**: this readme, demo://logo.png, and the notes
  demo://notes/{id} (ids: welcome, shopping-list, ideas).
- **Prompts**: ` + "`summarize`" + ` and ` + "`greeting`" + `; argument values
  can be completed.

Configure an upstream server to replace this namespace with real ones.
`

// notes are the documents behind demo://notes/{id}, in completion order.
var notes = []struct{ id, text string }{
	{"welcome", "Welcome to mcpx! This note was read through the resource template demo://notes/{id}."},
	{"shopping-list", "- coffee\n- oat milk\n- a second monitor"},
	{"ideas", "1. Put mcpx in front of every MCP server.\n2. Let old clients talk to new servers.\n3. Nap."},
}

func noteIDs() []string {
	ids := make([]string, len(notes))
	for i, n := range notes {
		ids[i] = n.id
	}
	return ids
}

// logo is a 16×16 PNG: a white ring on teal, drawn rather than stored so
// the source holds no opaque bytes. Encoding is deterministic.
var logo = func() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 16, 16))
	for y := range 16 {
		for x := range 16 {
			dx, dy := 2*x-15, 2*y-15 // twice the distance from the centre
			c := color.NRGBA{0x00, 0x80, 0x80, 0xff}
			if d := dx*dx + dy*dy; d >= 100 && d <= 196 {
				c = color.NRGBA{0xff, 0xff, 0xff, 0xff}
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}()

func addResources(c *catalog.Catalog) {
	c.AddResource(mcp.Resource{
		URI:         "demo://readme",
		Name:        "readme",
		Title:       "About the demo namespace",
		Description: "What the demo namespace offers and what to try first.",
		MIMEType:    "text/markdown",
		Size:        mcp.Ptr(int64(len(readme))),
	}, catalog.Static(catalog.Text("demo://readme", "text/markdown", readme)))

	c.AddResource(mcp.Resource{
		URI:         "demo://logo.png",
		Name:        "logo.png",
		Title:       "Demo logo",
		Description: "A 16×16 PNG image, to show binary resource contents.",
		MIMEType:    "image/png",
		Size:        mcp.Ptr(int64(len(logo))),
	}, catalog.Static(catalog.Blob("demo://logo.png", "image/png", logo)))

	c.AddTemplate(mcp.ResourceTemplate{
		URITemplate: "demo://notes/{id}",
		Name:        "note",
		Title:       "Demo note",
		Description: "A short plain-text note. Ids: " + strings.Join(noteIDs(), ", ") + " (completion suggests them).",
		MIMEType:    "text/plain",
	}, func(_ context.Context, uri string, vars map[string]string) ([]mcp.ReadResourceResultContentsItem, error) {
		for _, n := range notes {
			if n.id == vars["id"] {
				return []mcp.ReadResourceResultContentsItem{catalog.Text(uri, "text/plain", n.text)}, nil
			}
		}
		return nil, nil // no such note: not found
	})
}

// styles are summarize's style values, the first the default.
var styles = []string{"brief", "detailed", "bullet-points"}

var styleAsk = map[string]string{
	"brief":         "in two or three sentences",
	"detailed":      "in a few paragraphs, keeping every important point",
	"bullet-points": "as a short bulleted list of the key points",
}

// names are the greeting completions: a few people worth greeting.
var names = []string{"Ada", "Alan", "Barbara", "Grace", "Katherine", "Linus"}

func userText(text string) mcp.PromptMessage {
	return mcp.PromptMessage{Role: mcp.RoleUser, Content: mcp.ContentBlock{Value: &mcp.TextContent{Text: text}}}
}

func addPrompts(c *catalog.Catalog) {
	c.AddPrompt(mcp.Prompt{
		Name:        "summarize",
		Title:       "Summarize text",
		Description: "Asks the model to summarize a text in a chosen style.",
		Arguments: []mcp.PromptArgument{
			{Name: "text", Title: "Text", Description: "The text to summarize.", Required: mcp.Ptr(true)},
			{Name: "style", Title: "Style", Description: "One of " + strings.Join(styles, ", ") + "; brief when omitted."},
		},
	}, func(_ context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
		style := args["style"]
		if style == "" {
			style = styles[0]
		}
		ask, ok := styleAsk[style]
		if !ok {
			return nil, server.InvalidParams("prompt %q: style %q is not one of %s", "summarize", style, strings.Join(styles, ", "))
		}
		return &mcp.GetPromptResult{
			Description: "Summarize a text (" + style + ")",
			Messages:    []mcp.PromptMessage{userText("Summarize the following text " + ask + ":\n\n" + args["text"])},
		}, nil
	})

	c.AddPrompt(mcp.Prompt{
		Name:        "greeting",
		Title:       "Greeting",
		Description: "Asks the model for a short, friendly greeting for someone.",
		Arguments: []mcp.PromptArgument{
			{Name: "name", Title: "Name", Description: "Who to greet.", Required: mcp.Ptr(true)},
		},
	}, func(_ context.Context, args map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{
			Description: "Greet " + args["name"],
			Messages:    []mcp.PromptMessage{userText("Write a short, friendly greeting for " + args["name"] + ".")},
		}, nil
	})
}

// complete suggests summarize's styles, greeting's names and the notes'
// ids; anything else has no suggestions.
func complete(_ context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	arg, value := p.Argument.Name, p.Argument.Value
	switch ref := p.Ref.Value.(type) {
	case *mcp.PromptReference:
		switch {
		case ref.Name == "summarize" && arg == "style":
			return catalog.Suggest(value, styles...), nil
		case ref.Name == "greeting" && arg == "name":
			return catalog.Suggest(value, names...), nil
		}
	case *mcp.ResourceTemplateReference:
		if ref.URI == "demo://notes/{id}" && arg == "id" {
			return catalog.Suggest(value, noteIDs()...), nil
		}
	}
	return catalog.Suggest(value), nil
}
