package peertest

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/demo"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/testkit/revs"
	"github.com/mcpx-dev/mcpx/testkit/testbin"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// mcpxBin is the mcpx binary TestMain builds from ./cmd/mcpx.
var mcpxBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mcpx-peertest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if mcpxBin, err = testbin.Build(dir, "./cmd/mcpx"); err != nil {
		fmt.Fprintln(os.Stderr, "peertest:", err)
		return 1
	}
	return m.Run()
}

// showWire logs every recorded wire, not only a failing test's:
// PEERTEST_WIRE=1 go test -v ./runtime/peertest/
var showWire = os.Getenv("PEERTEST_WIRE") != ""

// The real clients this package runs, each speaking the revisions its
// SDK lists as supported (read from the SDK itself, so an upgrade that
// adds one is picked up). Each test runs every revision in the tables its
// client speaks; TestRealClientCoverage reports those no client speaks.
var (
	// goSDKClient: go-sdk v1.8.0, pinned with
	// ClientSessionOptions.ProtocolVersion (mcp.SupportedProtocolVersions).
	goSDKClient = revs.Peer{Name: "go-sdk v1.8.0 client", Speaks: gosdk.SupportedProtocolVersions()}
	// mcpGoClient: mcp-go v1.2.1, pinned with client.WithProtocolVersion
	// (mcp.ValidProtocolVersions).
	mcpGoClient = revs.Peer{Name: "mcp-go v1.2.1 client", Speaks: mcpgo.ValidProtocolVersions}
)

// revisionsOf is what a matrix runs for p: the revisions in the tables it
// speaks, oldest first.
func revisionsOf(p revs.Peer) []string { return revs.Strings(revs.OldestFirst(p.Revisions())) }

// TestRealClientCoverage reports, for every revision in the tables, which
// real client runs it here, and skips (does not fail) naming a revision
// none of them speaks, which no test of this package then covers.
func TestRealClientCoverage(t *testing.T) {
	revs.ReportCoverage(t, "client", goSDKClient, mcpGoClient)
}

// hasTitles reports whether rev has title on tools, resources, resource
// templates, prompts, prompt arguments and Implementation (all added in
// 2025-06-18), as the tables say.
func hasTitles(rev string) bool {
	for _, typ := range []string{"Implementation", "Tool", "Resource", "ResourceTemplate", "Prompt", "PromptArgument"} {
		if !revs.HasMember(rev, typ, "title") {
			return false
		}
	}
	return true
}

// hasPing reports whether rev has ping (2026-07-28 removed it; go-sdk
// v1.8.0 pinned to 2026-07-28 still sends one, without the _meta every
// 2026-07-28 request must carry).
func hasPing(rev string) bool { return revs.HasMethod(rev, mcp.MethodPing) }

// hasAnnotations reports whether rev has tool annotations (added in
// 2025-03-26).
func hasAnnotations(rev string) bool { return revs.HasMember(rev, "Tool", "annotations") }

// hasStructuredContent reports whether rev has outputSchema and
// structuredContent (added in 2025-06-18).
func hasStructuredContent(rev string) bool {
	return revs.HasMember(rev, "Tool", "outputSchema") && revs.HasMember(rev, "CallToolResult", "structuredContent")
}

// hasCompletions reports whether rev has the completions server
// capability (added in 2025-03-26).
func hasCompletions(rev string) bool { return revs.HasServerCapability(rev, "completions") }

// recordStdio returns the wire of a stdio connection to a client pinned to
// rev; when the test ends (after the process has exited) every message
// mcpx wrote is validated.
func recordStdio(t *testing.T, rev string) *wiretest.StdioWire {
	w := new(wiretest.StdioWire)
	t.Cleanup(func() {
		msgs, err := w.Sent()
		if err != nil {
			t.Errorf("reading the recorded stdio wire: %v", err)
		}
		wiretest.Validate(t, rev, msgs)
		if t.Failed() || showWire {
			t.Logf("client to mcpx:\n%s\nmcpx to client:\n%s", w.FromClient.String(), w.FromServer.String())
		}
	})
	return w
}

// recordHTTP is recordStdio for Streamable HTTP.
func recordHTTP(t *testing.T, rev string) *wiretest.HTTPWire {
	w := new(wiretest.HTTPWire)
	t.Cleanup(func() {
		msgs, err := w.Sent()
		if err != nil {
			t.Errorf("reading the recorded HTTP wire: %v", err)
		}
		wiretest.Validate(t, rev, msgs)
		if t.Failed() || showWire {
			for _, ex := range w.Exchanges() {
				status, header, body, lost := ex.Response()
				t.Logf("exchange %d: %s %s\n%s\n-> %d %s\n%s", ex.N, ex.Method, headerLine(ex.ReqHeader), ex.ReqBody, status, headerLine(header), body)
				if len(lost) > 0 {
					t.Logf("exchange %d, written after the client had gone:\n%s", ex.N, lost)
				}
			}
		}
	})
	return w
}

func headerLine(h map[string][]string) string {
	var parts []string
	for _, k := range []string{"Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name"} {
		for hk, v := range h {
			if strings.EqualFold(hk, k) {
				parts = append(parts, k+": "+strings.Join(v, ","))
			}
		}
	}
	return strings.Join(parts, "; ")
}

// process is a running `mcpx stdio`. Its stdin and stdout are teed into a
// wiretest.StdioWire; the client reads and writes Stdout and Stdin.
type process struct {
	Stdin  io.WriteCloser
	Stdout io.ReadCloser
}

// startStdio runs the mcpx binary as `mcpx stdio`, recording both
// directions into w. mcpx's stdout is copied to the record and to the
// client by a goroutine of its own, so that the record holds every byte
// mcpx wrote whatever the client does with its end. When the test ends
// (after the client has closed) stdin is closed and mcpx must exit, with
// status 0, within wiretest.ExitTimeout, having logged no error.
func startStdio(t *testing.T, w *wiretest.StdioWire) *process {
	cmd := exec.Command(mcpxBin, "stdio")
	var stderr wiretest.LockedBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		t.Fatalf("start mcpx stdio: %v", err)
	}
	pw.Close()
	toClient := wiretest.NewPipe()
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		defer pr.Close()
		defer toClient.CloseWrite()
		io.Copy(io.MultiWriter(&w.FromServer, toClient), pr)
	}()
	t.Cleanup(func() {
		stdin.Close()
		exited := make(chan error, 1)
		go func() { <-eof; exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("mcpx stdio exited with %v", err)
			}
		case <-time.After(wiretest.ExitTimeout):
			t.Errorf("mcpx stdio was still running %s after its input closed; killed", wiretest.ExitTimeout)
			cmd.Process.Kill()
			<-exited
		}
		wiretest.CheckLog(t, "mcpx stdio", &stderr)
	})
	return &process{Stdin: wiretest.TeeWriter{W: stdin, Rec: &w.FromClient}, Stdout: toClient}
}

// mcpxConn is mcpx started for one client: `mcpx stdio` or the
// Streamable HTTP endpoint, with its wire recorded.
type mcpxConn struct {
	stdio  *wiretest.StdioWire
	proc   *process // stdio: what the client reads and writes
	http   *wiretest.HTTPWire
	url    string       // HTTP: the endpoint
	client *http.Client // HTTP: the client's
}

// startMCPX starts mcpx over transport for a client pinned to rev. Over
// HTTP the client gets an http.Client whose idle connections are closed
// before the server shuts down (see TestShutdownWithAnUnusedConnection).
func startMCPX(t *testing.T, transport, rev string) *mcpxConn {
	c := new(mcpxConn)
	switch transport {
	case "stdio":
		c.stdio = recordStdio(t, rev)
		c.proc = startStdio(t, c.stdio)
	case "streamable HTTP":
		c.http = recordHTTP(t, rev)
		c.url = startHTTP(t, c.http)
		tr := http.DefaultTransport.(*http.Transport).Clone()
		t.Cleanup(tr.CloseIdleConnections)
		c.client = &http.Client{Transport: tr}
	default:
		t.Fatalf("unknown transport %q", transport)
	}
	return c
}

// awaitCancelled waits until mcpx has been told that the client gave up
// on its tools/call of tool: over stdio, the client's
// notifications/cancelled has been written to mcpx; over HTTP, the POST
// has ended (mcpx takes a client that goes away as cancellation). The
// clients send the notification on a goroutine of their own, so without
// this a test could end first and leave mcpx to drain the call.
func (c *mcpxConn) awaitCancelled(t *testing.T, tool string) {
	t.Helper()
	if c.stdio != nil {
		if !c.stdio.FromClient.Await(func(b []byte) bool { return bytes.Contains(b, []byte(`"notifications/cancelled"`)) }, notificationWait) {
			t.Fatalf("the client sent no notifications/cancelled within %s", notificationWait)
		}
		return
	}
	var calls []*wiretest.Exchange
	for _, ex := range c.http.Exchanges() {
		if bytes.Contains(ex.ReqBody, []byte(`"tools/call"`)) && bytes.Contains(ex.ReqBody, []byte(`"`+tool+`"`)) {
			calls = append(calls, ex)
		}
	}
	if len(calls) == 0 {
		t.Fatalf("no tools/call of %s was recorded", tool)
	}
	for _, ex := range calls {
		select {
		case <-ex.Done():
		case <-time.After(notificationWait):
			t.Fatalf("mcpx was still serving the tools/call of %s %s after the client cancelled it", tool, notificationWait)
		}
	}
}

// serverInfo is what mcpx calls itself, as `mcpx serve` does.
var serverInfo = mcp.Implementation{Name: "mcpx", Title: "mcpx gateway", Version: "0.1.0"}

// startHTTP serves the demo namespace over Streamable HTTP (see
// wiretest.ServeHTTP), recording every exchange into w, and returns the
// endpoint URL.
func startHTTP(t *testing.T, w *wiretest.HTTPWire) string {
	var logs wiretest.LockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	e := &edge.Edge{
		Server: &server.Server{NS: demo.New(), Info: serverInfo, TTLMs: 60_000},
		Log:    log,
	}
	return wiretest.ServeHTTP(t, e, w, &logs)
}
