package gatewaytest

// The upstreams the gateway fronts in these tests. Each is a real process:
// the test binary re-executes itself with MCPX_GATEWAYTEST_UPSTREAM set to
// a mode, and TestMain serves that mode on stdin and stdout instead of
// running the tests:
//
//	gosdk:REV    the official Go SDK server, pinned to REV with
//	             ServerOptions.SupportedProtocolVersions
//	mcpgo:REV    mark3labs/mcp-go's server, pinned to REV (see serveMCPGo)
//	flood        a hand-written server whose tools flood progress and
//	             list changes (serveFlood)
//	exec:REV     the program and arguments that follow on the command line
//	             (mcpx-fixture, node running server-everything), which
//	             speaks REV
//
// Every line mcpx writes to the upstream's stdin is appended, before the
// SDK sees it, to the file $MCPX_GATEWAYTEST_RECORD; when the test ends
// each is closed-world validated against the revision it is in (see
// upstreamRevision and checkToUpstream). The validation is done once, in
// the test, rather than in each upstream: loading the validator in a dozen
// race-enabled processes at once costs seconds of CPU on a small machine,
// enough to hold up the upstreams' answers to mcpx's era probe past its
// timeout (edge.DiscoverTimeout) and so change what is being tested.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"

	m3mcp "github.com/mark3labs/mcp-go/mcp"
	m3server "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
	"github.com/mcpx-dev/mcpx/testkit/revs"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

const (
	envUpstream = "MCPX_GATEWAYTEST_UPSTREAM" // the mode to serve
	envRecord   = "MCPX_GATEWAYTEST_RECORD"   // a file that gets every line read on stdin
)

// serveUpstream runs the upstream named by mode and returns the exit code.
func serveUpstream(mode string) int {
	kind, rev, _ := strings.Cut(mode, ":")
	ctx := context.Background()
	switch kind {
	case "gosdk":
		in := recordedStdin(nil)
		if err := goSDKServer(rev).Run(ctx, &sdk.IOTransport{Reader: in, Writer: nopCloser{os.Stdout}}); err != nil && err != io.EOF {
			fmt.Fprintln(os.Stderr, "gosdk:", err)
		}
		return 0
	case "mcpgo":
		return serveMCPGo(ctx, rev)
	case "flood":
		return serveFlood(os.Stdin)
	case "large":
		return serveLarge(os.Stdin)
	case "largehttp":
		return serveLargeHTTP()
	case "asker":
		return serveAsker(rev) // questions_test.go
	case "pidasker":
		return servePIDAsker(rev) // perclient_test.go
	case "gosdkasker":
		return serveGoSDKAsker(rev) // sdkasker_test.go
	case "parker":
		return serveParker(rev) // parked_test.go
	case "modernasker":
		return serveModernAsker() // questions_matrix_test.go
	case "subber", "nosubber":
		return serveSubber(rev, kind == "subber") // subscribe_test.go
	case "gosdksubber":
		return serveGoSDKSubber(rev) // gosdk_subscribe_test.go
	case "tasker":
		return serveTasker(rev) // tasks_upstream_test.go
	case "exec":
		if len(os.Args) < 2 {
			fmt.Fprintln(os.Stderr, "exec: no program to run")
			return 2
		}
		cmd := exec.Command(os.Args[1], os.Args[2:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = recordedStdin(nil), os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "exec:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown mode", mode)
	return 2
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// serveMCPGo serves mcp-go pinned to rev. mcp-go v1.2.1 has no server
// option that pins a revision: server/discover lists what the context
// names (server.WithSupportedProtocolVersions), and initialize answers any
// valid legacy version the client asks for (mcp.NegotiateLegacyVersion).
// So a rev other than its newest is pinned through discover, which lists
// only rev, and a legacy rev also through initialize: the initialize mcpx
// sent, once validated as sent, reaches mcp-go asking for rev, as if
// mcp-go knew no other revision. At its newest (2026-07-28 for v1.2.1)
// mcp-go is left as it is (it serves the modern era over stdio).
func serveMCPGo(ctx context.Context, rev string) int {
	var rewrite func([]byte) []byte
	if rev != m3mcp.ValidProtocolVersions[0] {
		ctx = m3server.WithSupportedProtocolVersions(ctx, []string{rev})
	}
	if revs.IsLegacy(rev) {
		rewrite = func(line []byte) []byte {
			var m map[string]json.RawMessage
			if json.Unmarshal(line, &m) != nil || string(m["method"]) != `"initialize"` {
				return line
			}
			var p map[string]json.RawMessage
			if json.Unmarshal(m["params"], &p) != nil {
				return line
			}
			p["protocolVersion"], _ = json.Marshal(rev)
			m["params"], _ = json.Marshal(p)
			out, _ := json.Marshal(m)
			return out
		}
	}
	in := recordedStdin(rewrite)
	if err := m3server.NewStdioServer(mcpGoServer(rev)).Listen(ctx, in, os.Stdout); err != nil && err != io.EOF && err != context.Canceled {
		fmt.Fprintln(os.Stderr, "mcpgo:", err)
	}
	return 0
}

// recordedStdin is stdin, each line recorded before it is passed on,
// rewritten by rewrite when that is not nil.
func recordedStdin(rewrite func([]byte) []byte) io.ReadCloser {
	record := appender(os.Getenv(envRecord))
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			line := append([]byte(nil), sc.Bytes()...)
			if len(strings.TrimSpace(string(line))) == 0 {
				continue
			}
			record(string(line))
			if rewrite != nil {
				line = rewrite(line)
			}
			if _, err := pw.Write(append(line, '\n')); err != nil {
				return
			}
		}
		pw.CloseWithError(sc.Err())
	}()
	return pr
}

// appender returns a function that appends a record to the file at path
// (nothing when path is ""). Records are separated by a line of its own.
func appender(path string) func(string) {
	var mu sync.Mutex
	return func(s string) {
		if path == "" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "record:", err)
			return
		}
		fmt.Fprintf(f, "%s\n%s\n", s, recordSep)
		f.Close()
	}
}

// recordSep ends each record in the record file.
const recordSep = "\x1e"

// upstreamRevision is the revision a message mcpx sends to an upstream
// pinned to pinned is in: server/discover, the era probe, is a modern
// request whatever the upstream (it names its revision in _meta; without
// one, the newest modern);
// initialize is in the revision it offers (the client's latest, which the
// server answers with its own); everything else must be in the pinned
// revision.
func upstreamRevision(pinned string, f *wiretest.Frame) string {
	switch f.Method {
	case mcp.MethodServerDiscover:
		if r := wiretest.MetaVersion(f.Params); r != "" {
			return r
		}
		return string(revs.NewestModern())
	case mcp.MethodInitialize:
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(f.Params, &p) == nil && p.ProtocolVersion != "" {
			return p.ProtocolVersion
		}
	}
	return pinned
}

// checkToUpstream validates one message mcpx sent to an upstream: its
// envelope against JSONRPCMessage, then a request against ClientRequest and
// a notification against ClientNotification (whole frames from 2025-11-25
// on, {method, params} before; see wiretest.CheckFramed). A response (mcpx
// answering a request of the upstream's) has only its envelope checked. It
// returns the revision it checked against.
func checkToUpstream(v *closedworld.Validator, pinned string, raw []byte) (string, error) {
	var f wiretest.Frame
	if err := json.Unmarshal(raw, &f); err != nil {
		return pinned, fmt.Errorf("not a JSON-RPC message: %w", err)
	}
	rev := upstreamRevision(pinned, &f)
	if err := v.Validate(rev, "JSONRPCMessage", raw); err != nil {
		return rev, fmt.Errorf("envelope: %w", err)
	}
	switch {
	case f.IsRequest():
		return rev, wiretest.CheckFramed(v, rev, "ClientRequest", &f)
	case f.IsNotification():
		return rev, wiretest.CheckFramed(v, rev, "ClientNotification", &f)
	}
	return rev, nil
}

// What every upstream offers, its own revision and SDK in each answer so
// that the test sees which upstream answered.
const (
	echoTool     = "echo"
	infoURI      = "test://info"
	itemTemplate = "test://items/{id}"
	greetPrompt  = "greet"
)

func echoed(who, text string) string   { return who + " echoes: " + text }
func infoText(who string) string       { return "info from " + who }
func greeting(who, name string) string { return "Hello, " + name + "! (" + who + ")" }
func completions(who, value string) []string {
	return []string{value + "-" + who, value + "-more"}
}

type echoIn struct {
	Text string `json:"text"`
}

// goSDKServer is an official Go SDK server pinned to rev.
func goSDKServer(rev string) *sdk.Server {
	who := "gosdk@" + rev
	s := sdk.NewServer(&sdk.Implementation{Name: "gatewaytest-gosdk", Version: "1.0.0"}, &sdk.ServerOptions{
		SupportedProtocolVersions: []string{rev},
		CompletionHandler: func(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
			return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: completions(who, req.Params.Argument.Value)}}, nil
		},
	})
	sdk.AddTool(s, &sdk.Tool{Name: echoTool, Description: "Echoes its text."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: echoed(who, in.Text)}}}, nil, nil
		})
	s.AddResource(&sdk.Resource{URI: infoURI, Name: "info", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: infoText(who)}}}, nil
		})
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: itemTemplate, Name: "item", MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "item at " + req.Params.URI}}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: greetPrompt, Description: "Greets someone.", Arguments: []*sdk.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: greeting(who, req.Params.Arguments["name"])}}}}, nil
		})
	return s
}

// mcpGoServer is a mark3labs/mcp-go server with the same features.
func mcpGoServer(rev string) *m3server.MCPServer {
	who := "mcpgo@" + rev
	c := mcpGoCompleter{who}
	s := m3server.NewMCPServer("gatewaytest-mcpgo", "1.0.0", m3server.WithCompletions(),
		m3server.WithResourceCompletionProvider(c), m3server.WithPromptCompletionProvider(c))
	s.AddTool(m3mcp.NewTool(echoTool, m3mcp.WithDescription("Echoes its text."), m3mcp.WithString("text")),
		func(_ context.Context, req m3mcp.CallToolRequest) (*m3mcp.CallToolResult, error) {
			return m3mcp.NewToolResultText(echoed(who, req.GetString("text", ""))), nil
		})
	s.AddResource(m3mcp.NewResource(infoURI, "info", m3mcp.WithMIMEType("text/plain")),
		func(_ context.Context, req m3mcp.ReadResourceRequest) ([]m3mcp.ResourceContents, error) {
			return []m3mcp.ResourceContents{m3mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: infoText(who)}}, nil
		})
	s.AddResourceTemplate(m3mcp.NewResourceTemplate(itemTemplate, "item", m3mcp.WithTemplateMIMEType("text/plain")),
		func(_ context.Context, req m3mcp.ReadResourceRequest) ([]m3mcp.ResourceContents, error) {
			return []m3mcp.ResourceContents{m3mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "item at " + req.Params.URI}}, nil
		})
	s.AddPrompt(m3mcp.NewPrompt(greetPrompt, m3mcp.WithPromptDescription("Greets someone."), m3mcp.WithArgument("name", m3mcp.RequiredArgument())),
		func(_ context.Context, req m3mcp.GetPromptRequest) (*m3mcp.GetPromptResult, error) {
			return m3mcp.NewGetPromptResult("", []m3mcp.PromptMessage{m3mcp.NewPromptMessage(m3mcp.RoleUser, m3mcp.NewTextContent(greeting(who, req.Params.Arguments["name"])))}), nil
		})
	return s
}

type mcpGoCompleter struct{ who string }

func (c mcpGoCompleter) CompleteResourceArgument(_ context.Context, _ string, arg m3mcp.CompleteArgument, _ m3mcp.CompleteContext) (*m3mcp.Completion, error) {
	return &m3mcp.Completion{Values: completions(c.who, arg.Value)}, nil
}

func (c mcpGoCompleter) CompletePromptArgument(_ context.Context, _ string, arg m3mcp.CompleteArgument, _ m3mcp.CompleteContext) (*m3mcp.Completion, error) {
	return &m3mcp.Completion{Values: completions(c.who, arg.Value)}, nil
}
