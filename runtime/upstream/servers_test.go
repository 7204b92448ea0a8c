package upstream

// The upstreams the tests run: the test binary re-executes itself with
// MCPX_UPSTREAM_TEST_SERVER set to a mode, and TestMain serves that mode on
// stdin and stdout instead of running the tests.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	m3mcp "github.com/mark3labs/mcp-go/mcp"
	m3server "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	envMode   = "MCPX_UPSTREAM_TEST_SERVER" // the mode to serve
	envRecord = "MCPX_UPSTREAM_TEST_RECORD" // a file that gets every line read on stdin
	envMark   = "MCPX_UPSTREAM_TEST_MARK"   // a file the server appends events to
	envExec   = "MCPX_UPSTREAM_TEST_EXEC"   // mode exec: the program to run behind the recorder
)

// serveMode runs the upstream named by mode and returns the exit code.
func serveMode(mode string) int {
	in := recordedStdin()
	ctx := context.Background()
	kind, arg, _ := strings.Cut(mode, ":")
	switch kind {
	case "gosdk":
		err := goSDKServer(arg, mark).Run(ctx, &sdk.IOTransport{Reader: in, Writer: os.Stdout})
		if err != nil && err != io.EOF {
			fmt.Fprintln(os.Stderr, "gosdk:", err)
		}
		return 0
	case "mark3":
		if arg == "legacy" {
			ctx = m3server.WithSupportedProtocolVersions(ctx, m3mcp.LegacyProtocolVersions())
		}
		if err := m3server.NewStdioServer(mark3Server()).Listen(ctx, in, os.Stdout); err != nil && err != io.EOF && err != context.Canceled {
			fmt.Fprintln(os.Stderr, "mark3:", err)
		}
		return 0
	case "exec": // the recorder in front of another program (the fixture)
		cmd := exec.Command(os.Getenv(envExec))
		cmd.Stdin, cmd.Stdout, cmd.Stderr = in, os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "exec:", err)
			return 1
		}
		return 0
	case "raw": // a hand-written server that misbehaves as arg says (rawServer)
		return rawServer(in, arg)
	case "hang": // reads everything, answers nothing
		_, _ = io.Copy(io.Discard, in)
		return 0
	case "deaf": // serves the handshake, then stops reading its input
		_ = goSDKServer(arg, mark).Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(&deafAfterInit{r: in}), Writer: os.Stdout})
		return 0
	case "garbage": // garbage on stdout first, then a proper server
		fmt.Println("this is not JSON")
		fmt.Println(`{"jsonrpc":"2.0","id":"nobody-asked","result":{}}`)
		fmt.Println(`{"not":"jsonrpc"}`)
		fmt.Println("\x00\x01\x02 binary junk")
		_ = goSDKServer(arg, mark).Run(ctx, &sdk.IOTransport{Reader: in, Writer: os.Stdout})
		return 0
	case "garbagehang": // answers every line with garbage, never with protocol
		s := bufio.NewScanner(in)
		for s.Scan() {
			fmt.Println("garbage in answer to", len(s.Bytes()), "bytes")
		}
		return 0
	case "chatty": // talks before it is asked: a log message and a ping
		fmt.Println(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"starting"}}`)
		fmt.Println(`{"jsonrpc":"2.0","id":"srv-1","method":"ping"}`)
		_ = goSDKServer(arg, mark).Run(ctx, &sdk.IOTransport{Reader: in, Writer: os.Stdout})
		return 0
	case "grandchild": // starts a sleep (holding stdout with arg inherit), then serves
		{
			cmd := exec.Command("sleep", "60")
			if arg == "inherit" {
				cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			}
			if err := cmd.Start(); err != nil {
				fmt.Fprintln(os.Stderr, "grandchild:", err)
				return 1
			}
			mark("pid %d", cmd.Process.Pid)
		}
		_ = goSDKServer("2025-11-25", mark).Run(ctx, &sdk.IOTransport{Reader: in, Writer: os.Stdout})
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown mode", mode)
	return 2
}

// recordedStdin is stdin, copied line by line to $MCPX_UPSTREAM_TEST_RECORD
// when that is set.
func recordedStdin() io.ReadCloser {
	path := os.Getenv(envRecord)
	if path == "" {
		return os.Stdin
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(io.MultiWriter(f, pw), os.Stdin)
		f.Close()
		pw.CloseWithError(err)
	}()
	return pr
}

// mark appends one event line to $MCPX_UPSTREAM_TEST_MARK.
func mark(format string, args ...any) {
	path := os.Getenv(envMark)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, format+"\n", args...)
	f.Close()
}

type echoIn struct {
	Text string `json:"text"`
}

// goSDKServer is an official Go SDK server pinned to rev ("" = all).
func goSDKServer(rev string, mark func(string, ...any)) *sdk.Server {
	opts := &sdk.ServerOptions{
		CompletionHandler: func(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
			return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{req.Params.Argument.Value + "-alpha", req.Params.Argument.Value + "-beta"}}}, nil
		},
	}
	if rev != "" {
		opts.SupportedProtocolVersions = []string{rev}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "gosdk-test", Version: "1.0.0"}, opts)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "progress", Description: "Reports progress 1, 2, 3 of 3."},
		func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= 3; i++ {
					_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)})
				}
			} else {
				mark("progress without a token")
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "progress done"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "sleep", Description: "Sleeps until cancelled."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			mark("sleep started")
			select {
			case <-ctx.Done():
				mark("sleep cancelled")
				return nil, nil, ctx.Err()
			case <-time.After(30 * time.Second):
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "woke up"}}}, nil, nil
			}
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Exits the process mid-call."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			mark("crash")
			os.Exit(3)
			return nil, nil, nil
		})
	s.AddResource(&sdk.Resource{URI: "test://static", Name: "static", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "static text"}}}, nil
		})
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "item at " + req.Params.URI}}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "greet", Description: "Greets someone.", Arguments: []*sdk.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Hello, " + req.Params.Arguments["name"] + "!"}}}}, nil
		})
	return s
}

// mark3Server is a mark3labs/mcp-go server with the same features.
func mark3Server() *m3server.MCPServer {
	s := m3server.NewMCPServer("mark3-test", "1.0.0", m3server.WithCompletions(),
		m3server.WithResourceCompletionProvider(m3Completer{}), m3server.WithPromptCompletionProvider(m3Completer{}))
	s.AddTool(m3mcp.NewTool("echo", m3mcp.WithDescription("Echoes its text."), m3mcp.WithString("text")),
		func(_ context.Context, req m3mcp.CallToolRequest) (*m3mcp.CallToolResult, error) {
			return m3mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	s.AddTool(m3mcp.NewTool("progress", m3mcp.WithDescription("Reports progress 1, 2, 3 of 3.")),
		func(ctx context.Context, req m3mcp.CallToolRequest) (*m3mcp.CallToolResult, error) {
			if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
				for i := 1; i <= 3; i++ {
					_ = m3server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress", map[string]any{
						"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": 3, "message": fmt.Sprintf("step %d", i)})
				}
				// mcp-go writes notifications from a goroutine of their own,
				// so without a pause they follow the response (and arrive
				// after mcpx forgot the token).
				time.Sleep(100 * time.Millisecond)
			} else {
				mark("progress without a token")
			}
			return m3mcp.NewToolResultText("progress done"), nil
		})
	s.AddTool(m3mcp.NewTool("sleep", m3mcp.WithDescription("Sleeps until cancelled.")),
		func(ctx context.Context, _ m3mcp.CallToolRequest) (*m3mcp.CallToolResult, error) {
			mark("sleep started")
			select {
			case <-ctx.Done():
				mark("sleep cancelled")
				return nil, ctx.Err()
			case <-time.After(30 * time.Second):
				return m3mcp.NewToolResultText("woke up"), nil
			}
		})
	s.AddResource(m3mcp.NewResource("test://static", "static", m3mcp.WithMIMEType("text/plain")),
		func(_ context.Context, req m3mcp.ReadResourceRequest) ([]m3mcp.ResourceContents, error) {
			return []m3mcp.ResourceContents{m3mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "static text"}}, nil
		})
	s.AddResourceTemplate(m3mcp.NewResourceTemplate("test://items/{id}", "item", m3mcp.WithTemplateMIMEType("text/plain")),
		func(_ context.Context, req m3mcp.ReadResourceRequest) ([]m3mcp.ResourceContents, error) {
			return []m3mcp.ResourceContents{m3mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "item at " + req.Params.URI}}, nil
		})
	s.AddPrompt(m3mcp.NewPrompt("greet", m3mcp.WithPromptDescription("Greets someone."), m3mcp.WithArgument("name", m3mcp.RequiredArgument())),
		func(_ context.Context, req m3mcp.GetPromptRequest) (*m3mcp.GetPromptResult, error) {
			return m3mcp.NewGetPromptResult("", []m3mcp.PromptMessage{m3mcp.NewPromptMessage(m3mcp.RoleUser, m3mcp.NewTextContent("Hello, "+req.Params.Arguments["name"]+"!"))}), nil
		})
	return s
}

type m3Completer struct{}

func (m3Completer) CompleteResourceArgument(_ context.Context, _ string, arg m3mcp.CompleteArgument, _ m3mcp.CompleteContext) (*m3mcp.Completion, error) {
	return &m3mcp.Completion{Values: []string{arg.Value + "-alpha", arg.Value + "-beta"}}, nil
}

func (m3Completer) CompletePromptArgument(_ context.Context, _ string, arg m3mcp.CompleteArgument, _ m3mcp.CompleteContext) (*m3mcp.Completion, error) {
	return &m3mcp.Completion{Values: []string{arg.Value + "-alpha", arg.Value + "-beta"}}, nil
}

// deafAfterInit reads like r until the initialized notification has gone
// through, then never returns from Read again.
type deafAfterInit struct {
	r    io.Reader
	seen []byte
	deaf bool
}

func (d *deafAfterInit) Read(p []byte) (int, error) {
	if d.deaf {
		select {}
	}
	n, err := d.r.Read(p)
	d.seen = append(d.seen, p[:n]...)
	if bytes.Contains(d.seen, []byte("notifications/initialized")) {
		d.deaf = true
	}
	return n, err
}
