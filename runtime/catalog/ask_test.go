package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

func askElicit(msg string) mcp.InputRequest {
	return mcp.InputRequest{Value: &mcp.ElicitRequest{Params: mcp.ElicitRequestParams{
		Value: &mcp.ElicitRequestFormParams{Message: msg, RequestedSchema: json.RawMessage(`{"type":"object","properties":{"v":{"type":"string"}}}`)},
	}}}
}

func askSample(prompt string) mcp.InputRequest {
	return mcp.InputRequest{Value: &mcp.CreateMessageRequest{Params: mcp.CreateMessageRequestParams{
		Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingMessageContent{Value: &mcp.TextContent{Text: prompt}}}},
		MaxTokens: 10,
	}}}
}

func accepted(v string) mcp.InputResponse {
	return mcp.InputResponse{Value: &mcp.ElicitResult{Action: "accept", Content: json.RawMessage(`{"v":"` + v + `"}`)}}
}

func elicitedV(t *testing.T, r mcp.InputResponse) string {
	t.Helper()
	e, ok := r.Value.(*mcp.ElicitResult)
	if !ok {
		t.Fatalf("answer is %T, want an elicitation result", r.Value)
	}
	var c struct{ V string }
	_ = json.Unmarshal(e.Content, &c)
	return c.V
}

// askCatalog is a catalog with two tools: one asks two questions at once
// (a, b), the other two in sequence (first, then second); each answers
// with the values it got.
func askCatalog(a *Asker) *Catalog {
	c := New()
	c.AddTool(mcp.Tool{Name: "both"}, func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
		ans, err := a.Ask(ctx, map[string]mcp.InputRequest{"a": askElicit("a?"), "b": askSample("b?")})
		if err != nil {
			return nil, err
		}
		s := ans["b"].Value.(*mcp.CreateMessageResult).Content.Value.(*mcp.TextContent).Text
		return TextResult(string(ans["a"].Value.(*mcp.ElicitResult).Content) + " " + s), nil
	})
	c.AddTool(mcp.Tool{Name: "seq"}, func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
		one, err := a.Ask(ctx, map[string]mcp.InputRequest{"first": askElicit("first?")})
		if err != nil {
			return nil, err
		}
		two, err := a.Ask(ctx, map[string]mcp.InputRequest{"second": askElicit("second?")})
		if err != nil {
			return nil, err
		}
		var v1, v2 struct{ V string }
		_ = json.Unmarshal(one["first"].Value.(*mcp.ElicitResult).Content, &v1)
		_ = json.Unmarshal(two["second"].Value.(*mcp.ElicitResult).Content, &v2)
		return TextResult(v1.V + "," + v2.V), nil
	})
	return c
}

var modern = server.WithTakesInputRequired(context.Background(), true)

func testAsker(t *testing.T) *Asker {
	t.Helper()
	s, err := requeststate.New([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	return &Asker{Namespace: "test", States: s}
}

// round calls tool with the answers and state; it returns the
// InputRequired when the call needs more, else the result text.
func round(t *testing.T, c *Catalog, tool string, args string, resp map[string]mcp.InputResponse, state string) (*mcp.InputRequiredResult, string, error) {
	t.Helper()
	r, err := c.CallTool(modern, &mcp.CallToolRequestParams{Name: tool, Arguments: json.RawMessage(args), InputResponses: resp, RequestState: state})
	var ir *server.InputRequired
	if errors.As(err, &ir) {
		return ir.Result, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	if r.IsError != nil && *r.IsError {
		t.Fatalf("%s: isError result %v", tool, r.Content[0].Value)
	}
	return nil, r.Content[0].Value.(*mcp.TextContent).Text, nil
}

func TestAskOneRound(t *testing.T) {
	c := askCatalog(testAsker(t))
	ir, _, err := round(t, c, "both", `{}`, nil, "")
	if err != nil || ir == nil {
		t.Fatalf("first call = %v, %v; want input_required", ir, err)
	}
	if len(ir.InputRequests) != 2 || ir.InputRequests["a"].Value == nil || ir.InputRequests["b"].Value == nil || ir.RequestState == "" {
		t.Fatalf("input_required = %+v; want a and b and a state", ir)
	}
	resp := map[string]mcp.InputResponse{
		"a": accepted("x"),
		"b": {Value: &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: mcp.CreateMessageResultContent{Value: &mcp.TextContent{Text: "paris"}}}},
	}
	ir, text, err := round(t, c, "both", `{}`, resp, ir.RequestState)
	if err != nil || ir != nil || text != `{"v":"x"} paris` {
		t.Fatalf("retry = %v, %q, %v; want the answers", ir, text, err)
	}
}

func TestAskTwoRounds(t *testing.T) {
	c := askCatalog(testAsker(t))
	ir, _, _ := round(t, c, "seq", `{}`, nil, "")
	if ir == nil || len(ir.InputRequests) != 1 || ir.InputRequests["first"].Value == nil {
		t.Fatalf("round 1 = %+v; want first", ir)
	}
	ir, _, err := round(t, c, "seq", `{}`, map[string]mcp.InputResponse{"first": accepted("one")}, ir.RequestState)
	if err != nil || ir == nil || len(ir.InputRequests) != 1 || ir.InputRequests["second"].Value == nil {
		t.Fatalf("round 2 = %+v, %v; want second only", ir, err)
	}
	// Round 3 sends only the second answer (the client answers the last
	// round); the first comes from the state. A stale first answer sent
	// again is a key not asked: ignored, the state's wins.
	_, text, err := round(t, c, "seq", `{}`, map[string]mcp.InputResponse{"second": accepted("two"), "first": accepted("forged")}, ir.RequestState)
	if err != nil || text != "one,two" {
		t.Fatalf("round 3 = %q, %v; want one,two", text, err)
	}
}

func TestAskMissingAskedAgain(t *testing.T) {
	c := askCatalog(testAsker(t))
	ir, _, _ := round(t, c, "both", `{}`, nil, "")
	// Only a answered (and an extra key): b is asked again, alone, and
	// the next state carries a.
	ir, _, err := round(t, c, "both", `{}`, map[string]mcp.InputResponse{"a": accepted("x"), "zzz": accepted("extra")}, ir.RequestState)
	if err != nil || ir == nil || len(ir.InputRequests) != 1 || ir.InputRequests["b"].Value == nil {
		t.Fatalf("partial retry = %+v, %v; want b asked again", ir, err)
	}
	b := map[string]mcp.InputResponse{"b": {Value: &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: mcp.CreateMessageResultContent{Value: &mcp.TextContent{Text: "y"}}}}}
	if _, text, err := round(t, c, "both", `{}`, b, ir.RequestState); err != nil || text != `{"v":"x"} y` {
		t.Fatalf("last retry = %q, %v", text, err)
	}
	// Only unknown keys, no state: the question is asked, not an error.
	if ir, _, err := round(t, c, "both", `{}`, map[string]mcp.InputResponse{"wrong_key": accepted("w")}, ""); err != nil || ir == nil || len(ir.InputRequests) != 2 {
		t.Fatalf("unknown keys only = %+v, %v; want both asked", ir, err)
	}
}

func TestAskAnswersWithoutState(t *testing.T) {
	// Answers given in advance, with extra keys, complete the call: the
	// handler decides what it asks, and ignores the rest.
	c := askCatalog(testAsker(t))
	_, text, err := round(t, c, "seq", `{}`, map[string]mcp.InputResponse{"first": accepted("1"), "second": accepted("2"), "other": accepted("3")}, "")
	if err != nil || text != "1,2" {
		t.Fatalf("= %q, %v", text, err)
	}
}

func TestAskInvalidAnswer(t *testing.T) {
	c := askCatalog(testAsker(t))
	for name, resp := range map[string]mcp.InputResponse{
		"sampling result to an elicitation": {Value: &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: mcp.CreateMessageResultContent{Value: &mcp.TextContent{Text: "y"}}}},
		"roots result to an elicitation":    {Value: &mcp.ListRootsResult{}},
		"unknown action":                    {Value: &mcp.ElicitResult{Action: "maybe"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := round(t, c, "seq", `{}`, map[string]mcp.InputResponse{"first": resp}, "")
			var invalid *server.InvalidParamsError
			if !errors.As(err, &invalid) || !strings.Contains(invalid.Reason, `inputResponses["first"]`) {
				t.Fatalf("err = %v; want invalid params naming the key", err)
			}
		})
	}
}

func TestAskStateRefused(t *testing.T) {
	a := testAsker(t)
	c := askCatalog(a)
	ir, _, _ := round(t, c, "seq", `{"x":1}`, nil, "")
	good := ir.RequestState
	answer := map[string]mcp.InputResponse{"first": accepted("1")}
	other := testAsker(t)
	other.Namespace = "elsewhere"
	for name, tc := range map[string]struct {
		c     *Catalog
		tool  string
		args  string
		state string
		why   error
	}{
		"tampered":        {c, "seq", `{"x":1}`, good[:len(good)-2] + "AA", requeststate.ErrTampered},
		"other arguments": {c, "seq", `{"x":2}`, good, requeststate.ErrOtherRequest},
		"other tool":      {c, "both", `{"x":1}`, good, requeststate.ErrOtherRequest},
		"other namespace": {askCatalog(other), "seq", `{"x":1}`, good, requeststate.ErrOtherNamespace},
		"not mcpx's":      {c, "seq", `{"x":1}`, "opaque", requeststate.ErrMalformed},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := round(t, tc.c, tc.tool, tc.args, answer, tc.state)
			var invalid *server.InvalidParamsError
			if !errors.Is(err, tc.why) || !errors.As(err, &invalid) {
				t.Fatalf("err = %v; want %v as invalid params", err, tc.why)
			}
		})
	}
	// The good state still opens, on its own request, with its arguments
	// in another order and spacing.
	if ir, _, err := round(t, c, "seq", `{ "x" : 1 }`, answer, good); err != nil || ir == nil || ir.InputRequests["second"].Value == nil {
		t.Fatalf("good state = %+v, %v", ir, err)
	}
}

func TestAskExpired(t *testing.T) {
	a := testAsker(t)
	a.TTL = 1 // a nanosecond: expired when the retry comes
	c := askCatalog(a)
	ir, _, _ := round(t, c, "seq", `{}`, nil, "")
	_, _, err := round(t, c, "seq", `{}`, map[string]mcp.InputResponse{"first": accepted("1")}, ir.RequestState)
	if !errors.Is(err, requeststate.ErrExpired) {
		t.Fatalf("err = %v; want expired", err)
	}
}

func TestAskPrompt(t *testing.T) {
	a := testAsker(t)
	c := New()
	c.AddPrompt(mcp.Prompt{Name: "p"}, func(ctx context.Context, _ map[string]string) (*mcp.GetPromptResult, error) {
		ans, err := a.Ask(ctx, map[string]mcp.InputRequest{"ctx": askElicit("context?")})
		if err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{Description: elicitedV(t, ans["ctx"])}, nil
	})
	_, err := c.GetPrompt(modern, &mcp.GetPromptRequestParams{Name: "p"})
	var ir *server.InputRequired
	if !errors.As(err, &ir) {
		t.Fatalf("first = %v; want input_required", err)
	}
	r, err := c.GetPrompt(modern, &mcp.GetPromptRequestParams{Name: "p", InputResponses: map[string]mcp.InputResponse{"ctx": accepted("c")}, RequestState: ir.Result.RequestState})
	if err != nil || r.Description != "c" {
		t.Fatalf("retry = %+v, %v", r, err)
	}
	// A state of the prompt is refused on a tool of the same name.
	c.AddTool(mcp.Tool{Name: "p"}, func(ctx context.Context, _ json.RawMessage) (*mcp.CallToolResult, error) {
		_, err := a.Ask(ctx, map[string]mcp.InputRequest{"ctx": askElicit("context?")})
		return nil, err
	})
	_, err = c.CallTool(modern, &mcp.CallToolRequestParams{Name: "p", RequestState: ir.Result.RequestState, InputResponses: map[string]mcp.InputResponse{"ctx": accepted("c")}})
	if !errors.Is(err, requeststate.ErrOtherRequest) {
		t.Fatalf("prompt state on a tool: %v; want another request", err)
	}
}

func TestAskLegacySeam(t *testing.T) {
	c := askCatalog(testAsker(t))
	saved := LegacyAsk
	defer func() { LegacyAsk = saved }()
	// No MRTR: the question goes to LegacyAsk; when it cannot reach the
	// client, the tool's error is an isError result saying so.
	LegacyAsk = func(context.Context, string, any) (any, error) { return nil, ErrClientRequestsUnsupported }
	r, err := c.CallTool(context.Background(), &mcp.CallToolRequestParams{Name: "seq"})
	if err != nil || r.IsError == nil || !strings.Contains(r.Content[0].Value.(*mcp.TextContent).Text, ErrClientRequestsUnsupported.Error()) {
		t.Fatalf("legacy = %+v, %v", r, err)
	}
	// A LegacyAsk that can send requests gets one per question, with the
	// hub params, and its answers reach the handler.
	var asked []string
	LegacyAsk = func(_ context.Context, method string, params any) (any, error) {
		p := params.(*mcp.ElicitRequestParams).Value.(*mcp.ElicitRequestFormParams)
		asked = append(asked, method+" "+p.Message)
		return &mcp.ElicitResult{Action: "accept", Content: json.RawMessage(`{"v":"` + p.Message + `"}`)}, nil
	}
	r, err = c.CallTool(context.Background(), &mcp.CallToolRequestParams{Name: "seq"})
	if err != nil || r.Content[0].Value.(*mcp.TextContent).Text != "first?,second?" || strings.Join(asked, "; ") != "elicitation/create first?; elicitation/create second?" {
		t.Fatalf("legacy with requests = %+v, %v, asked %v", r, err, asked)
	}
}
