package gatewaytest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// session is one real client's session with mcpx, reduced to what the
// matrix asks: each call returns what the client decoded.
type session interface {
	// negotiated is the revision the session speaks.
	negotiated() string
	tools(ctx context.Context) ([]string, error)
	// call returns the text of the one text block of the result.
	call(ctx context.Context, name string, args map[string]any) (text string, isError bool, err error)
	// read returns the URI and text of the one text contents.
	read(ctx context.Context, uri string) (gotURI, text string, err error)
	// prompt returns the text of the one text message.
	prompt(ctx context.Context, name string, args map[string]string) (string, error)
	complete(ctx context.Context, prompt, arg, value string) ([]string, error)
}

// The two clients, each pinned to every revision (as in runtime/peertest).
const (
	goSDK = "go-sdk"
	mcpGo = "mcp-go"
)

// connection is how a client reaches mcpx: the Streamable HTTP endpoint,
// or the stdio transport's two ends.
type connection struct {
	url    string
	http   *http.Client
	reader io.ReadCloser
	writer io.WriteCloser
}

func connect(t *testing.T, clientName, rev string, c connection) session {
	t.Helper()
	switch clientName {
	case goSDK:
		return connectGoSDK(t, rev, c)
	case mcpGo:
		return connectMCPGo(t, rev, c)
	}
	t.Fatalf("unknown client %q", clientName)
	return nil
}

type goSDKSession struct{ cs *gosdk.ClientSession }

func connectGoSDK(t *testing.T, rev string, c connection) session {
	var tr gosdk.Transport
	if c.url != "" {
		tr = &gosdk.StreamableClientTransport{Endpoint: c.url, HTTPClient: c.http, MaxRetries: -1}
	} else {
		tr = &gosdk.IOTransport{Reader: c.reader, Writer: c.writer}
	}
	cl := gosdk.NewClient(&gosdk.Implementation{Name: "gatewaytest-go-sdk", Version: "1.0.0"}, nil)
	cs, err := cl.Connect(t.Context(), tr, &gosdk.ClientSessionOptions{ProtocolVersion: rev})
	if err != nil {
		t.Fatalf("go-sdk Connect pinned to %s: %v", rev, err)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("go-sdk ClientSession.Close: %v", err)
		}
	})
	return goSDKSession{cs}
}

func (s goSDKSession) negotiated() string { return s.cs.InitializeResult().ProtocolVersion }

func (s goSDKSession) tools(ctx context.Context) ([]string, error) {
	var names []string
	for tool, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		names = append(names, tool.Name)
	}
	return names, nil
}

func (s goSDKSession) call(ctx context.Context, name string, args map[string]any) (string, bool, error) {
	res, err := s.cs.CallTool(ctx, &gosdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", false, err
	}
	if len(res.Content) != 1 {
		return "", res.IsError, fmt.Errorf("%d content blocks, want one", len(res.Content))
	}
	tc, ok := res.Content[0].(*gosdk.TextContent)
	if !ok {
		return "", res.IsError, fmt.Errorf("content %#v, want text", res.Content[0])
	}
	return tc.Text, res.IsError, nil
}

func (s goSDKSession) read(ctx context.Context, uri string) (string, string, error) {
	res, err := s.cs.ReadResource(ctx, &gosdk.ReadResourceParams{URI: uri})
	if err != nil {
		return "", "", err
	}
	if len(res.Contents) != 1 {
		return "", "", fmt.Errorf("%d contents, want one", len(res.Contents))
	}
	return res.Contents[0].URI, res.Contents[0].Text, nil
}

func (s goSDKSession) prompt(ctx context.Context, name string, args map[string]string) (string, error) {
	res, err := s.cs.GetPrompt(ctx, &gosdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	if len(res.Messages) == 0 {
		return "", fmt.Errorf("no messages")
	}
	tc, ok := res.Messages[0].Content.(*gosdk.TextContent)
	if !ok {
		return "", fmt.Errorf("message %#v, want text", res.Messages[0].Content)
	}
	return tc.Text, nil
}

func (s goSDKSession) complete(ctx context.Context, prompt, arg, value string) ([]string, error) {
	res, err := s.cs.Complete(ctx, &gosdk.CompleteParams{
		Ref:      &gosdk.CompleteReference{Type: "ref/prompt", Name: prompt},
		Argument: gosdk.CompleteParamsArgument{Name: arg, Value: value},
	})
	if err != nil {
		return nil, err
	}
	return res.Completion.Values, nil
}

type mcpGoSession struct {
	c    *client.Client
	init *mcpgo.InitializeResult
}

func connectMCPGo(t *testing.T, rev string, c connection) session {
	var tr transport.Interface
	if c.url != "" {
		logs, log := logBuffer()
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("mcp-go log:\n%s", logs.String())
			}
		})
		h, err := transport.NewStreamableHTTP(c.url, transport.WithHTTPBasicClient(c.http), transport.WithHTTPLogger(log))
		if err != nil {
			t.Fatal(err)
		}
		tr = h
	} else {
		tr = transport.NewIO(c.reader, c.writer, nil)
	}
	cl := client.NewClient(tr, client.WithProtocolVersion(rev))
	t.Cleanup(func() {
		if err := cl.Close(); err != nil {
			t.Errorf("mcp-go Client.Close: %v", err)
		}
	})
	if err := cl.Start(t.Context()); err != nil {
		t.Fatalf("mcp-go Start: %v", err)
	}
	init, err := cl.Initialize(t.Context(), mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: "gatewaytest-mcp-go", Version: "1.0.0"},
	}})
	if err != nil {
		t.Fatalf("mcp-go Initialize pinned to %s: %v", rev, err)
	}
	return mcpGoSession{cl, init}
}

func (s mcpGoSession) negotiated() string { return s.init.ProtocolVersion }

func (s mcpGoSession) tools(ctx context.Context) ([]string, error) {
	var names []string
	req := mcpgo.ListToolsRequest{}
	for {
		res, err := s.c.ListTools(ctx, req)
		if err != nil {
			return nil, err
		}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if res.NextCursor == "" {
			return names, nil
		}
		req.Params.Cursor = res.NextCursor
	}
}

func (s mcpGoSession) call(ctx context.Context, name string, args map[string]any) (string, bool, error) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return "", false, err
	}
	if len(res.Content) != 1 {
		return "", res.IsError, fmt.Errorf("%d content blocks, want one", len(res.Content))
	}
	tc, ok := mcpgo.AsTextContent(res.Content[0])
	if !ok {
		return "", res.IsError, fmt.Errorf("content %#v, want text", res.Content[0])
	}
	return tc.Text, res.IsError, nil
}

func (s mcpGoSession) read(ctx context.Context, uri string) (string, string, error) {
	req := mcpgo.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := s.c.ReadResource(ctx, req)
	if err != nil {
		return "", "", err
	}
	if len(res.Contents) != 1 {
		return "", "", fmt.Errorf("%d contents, want one", len(res.Contents))
	}
	tc, ok := mcpgo.AsTextResourceContents(res.Contents[0])
	if !ok {
		return "", "", fmt.Errorf("contents %#v, want text", res.Contents[0])
	}
	return tc.URI, tc.Text, nil
}

func (s mcpGoSession) prompt(ctx context.Context, name string, args map[string]string) (string, error) {
	req := mcpgo.GetPromptRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := s.c.GetPrompt(ctx, req)
	if err != nil {
		return "", err
	}
	if len(res.Messages) == 0 {
		return "", fmt.Errorf("no messages")
	}
	tc, ok := mcpgo.AsTextContent(res.Messages[0].Content)
	if !ok {
		return "", fmt.Errorf("message %#v, want text", res.Messages[0].Content)
	}
	return tc.Text, nil
}

func (s mcpGoSession) complete(ctx context.Context, prompt, arg, value string) ([]string, error) {
	req := mcpgo.CompleteRequest{}
	req.Params.Ref = mcpgo.PromptReference{Type: "ref/prompt", Name: prompt}
	req.Params.Argument = mcpgo.CompleteArgument{Name: arg, Value: value}
	res, err := s.c.Complete(ctx, req)
	if err != nil {
		return nil, err
	}
	return res.Completion.Values, nil
}
