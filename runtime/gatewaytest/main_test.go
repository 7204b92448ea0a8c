package gatewaytest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	m3mcp "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/transport/stdio"
	"github.com/mcpx-dev/mcpx/testkit/revs"
	"github.com/mcpx-dev/mcpx/testkit/testbin"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

var (
	// fixtureBin is the mcpx-fixture binary TestMain builds.
	fixtureBin string
	// repoRoot is the module root.
	repoRoot string
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envUpstream); mode != "" {
		os.Exit(serveUpstream(mode))
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mcpx-gatewaytest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if repoRoot, err = testbin.ModuleRoot(); err != nil {
		fmt.Fprintln(os.Stderr, "gatewaytest:", err)
		return 1
	}
	if fixtureBin, err = testbin.Build(dir, "./cmd/mcpx-fixture"); err != nil {
		fmt.Fprintln(os.Stderr, "gatewaytest:", err)
		return 1
	}
	return m.Run()
}

// showWire logs every recorded wire, not only a failing test's:
// GATEWAYTEST_WIRE=1 go test -v ./runtime/gatewaytest/
var showWire = os.Getenv("GATEWAYTEST_WIRE") != ""

// The real peers of these tests, each speaking the revisions its SDK
// lists as supported (read from the SDK itself, so an upgrade that adds
// one is picked up): the clients, and the servers the gateway fronts. A
// matrix runs every revision in the tables a peer speaks;
// TestRealPeerCoverage reports those no real client, or no real upstream,
// speaks.
var (
	// go-sdk v1.8.0: a client pinned with ClientSessionOptions.ProtocolVersion,
	// a server with ServerOptions.SupportedProtocolVersions.
	goSDKClientPeer   = revs.Peer{Name: "go-sdk v1.8.0 client", Speaks: sdk.SupportedProtocolVersions()}
	goSDKUpstreamPeer = revs.Peer{Name: "go-sdk v1.8.0 server", Speaks: sdk.SupportedProtocolVersions()}
	// mcp-go v1.2.1: a client pinned with client.WithProtocolVersion, a
	// server as serveMCPGo does; both speak mcp.ValidProtocolVersions.
	mcpGoClientPeer   = revs.Peer{Name: "mcp-go v1.2.1 client", Speaks: m3mcp.ValidProtocolVersions}
	mcpGoUpstreamPeer = revs.Peer{Name: "mcp-go v1.2.1 server", Speaks: m3mcp.ValidProtocolVersions}
	// everythingPeer is server-everything at the one revision mcpx
	// reaches it at (see everythingRev), when it is installed.
	everythingPeer = revs.Peer{Name: "server-everything " + everythingVersion + " upstream", Speaks: []string{everythingRev}}
)

// clientPeers are the real clients by the names connect takes.
var clientPeers = map[string]revs.Peer{goSDK: goSDKClientPeer, mcpGo: mcpGoClientPeer}

// revisionsOf is what a matrix runs for p: the revisions in the tables it
// speaks, oldest first.
func revisionsOf(p revs.Peer) []string { return revs.Strings(revs.OldestFirst(p.Revisions())) }

// TestRealPeerCoverage reports, for every revision in the tables, which
// real clients and which real upstreams run it here, and skips (does not
// fail) naming a revision none of them speaks, which no real-peer test of
// this package then covers.
func TestRealPeerCoverage(t *testing.T) {
	t.Run("clients", func(t *testing.T) { revs.ReportCoverage(t, "client", goSDKClientPeer, mcpGoClientPeer) })
	t.Run("upstreams", func(t *testing.T) {
		revs.ReportCoverage(t, "upstream", goSDKUpstreamPeer, mcpGoUpstreamPeer, everythingPeer)
	})
}

// serverInfo is what mcpx calls itself, as `mcpx serve` does.
var serverInfo = mcp.Implementation{Name: "mcpx", Title: "mcpx gateway", Version: "0.1.0"}

// logBuffer is a log that a test reads: mcpx's own log lines.
func logBuffer() (*wiretest.LockedBuffer, *slog.Logger) {
	var b wiretest.LockedBuffer
	return &b, slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// serveHTTP serves ns over Streamable HTTP on a free loopback port through
// streamhttp.ListenAndServe, recording every exchange with a client pinned
// to rev; the recorded messages are validated when the test ends, after
// a graceful shutdown. It returns the endpoint and an http.Client whose
// idle connections close first.
func serveHTTP(t *testing.T, ns server.Namespace, rev string) (string, *http.Client) {
	w := recordHTTP(t, rev)
	logs, log := logBuffer()
	e := &edge.Edge{Server: &server.Server{NS: ns, Info: serverInfo, TTLMs: 60_000}, Log: log}
	u := wiretest.ServeHTTP(t, e, w, logs)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return u, &http.Client{Transport: tr}
}

// recordHTTP returns a wire recorder for a client pinned to rev, validated
// when the test ends.
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
				status, _, body, _ := ex.Response()
				t.Logf("exchange %d: %s\n%s\n-> %d\n%s", ex.N, ex.Method, ex.ReqBody, status, body)
			}
		}
	})
	return w
}

// serveStdio serves ns in-process on the stdio transport (runtime/transport/
// stdio, what `mcpx stdio` runs) for a client pinned to rev, recording both
// directions; the messages are validated when the test ends, after the
// client has closed and Serve has returned. It returns what the client
// reads and writes.
func serveStdio(t *testing.T, ns server.Namespace, rev string) (io.ReadCloser, io.WriteCloser) {
	w := new(wiretest.StdioWire)
	logs, log := logBuffer()
	e := &edge.Edge{Server: &server.Server{NS: ns, Info: serverInfo, TTLMs: 60_000}, Log: log}
	inR, inW := io.Pipe()
	toClient := wiretest.NewPipe()
	done := make(chan error, 1)
	go func() {
		err := stdio.Serve(context.Background(), e, inR, io.MultiWriter(&w.FromServer, toClient), stdio.Options{})
		toClient.CloseWrite()
		done <- err
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("stdio.Serve: %v", err)
			}
		case <-time.After(wiretest.ExitTimeout):
			t.Errorf("stdio.Serve was still running %s after its input closed", wiretest.ExitTimeout)
		}
		msgs, err := w.Sent()
		if err != nil {
			t.Errorf("reading the recorded stdio wire: %v", err)
		}
		wiretest.Validate(t, rev, msgs)
		if t.Failed() || showWire {
			t.Logf("client to mcpx:\n%s\nmcpx to client:\n%s", w.FromClient.String(), w.FromServer.String())
		}
		wiretest.CheckLog(t, "mcpx (stdio)", logs)
	})
	return toClient, wiretest.TeeWriter{W: inW, Rec: &w.FromClient}
}

// readyGateway is the gateway a config names (JSON; no ${VAR} is set),
// logging into the buffer it returns, once every upstream is ready. When
// the test ends it is closed, then after runs (nil: nothing more), then
// its log must hold no error (wiretest.CheckLog); secret, when not "",
// must appear nowhere in the log (an upstream's requestState, say).
func readyGateway(t *testing.T, name, doc, secret string, after func()) (*gateway.Gateway, *wiretest.LockedBuffer) {
	t.Helper()
	cfg, err := config.Parse(name, []byte(doc), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, doc)
	}
	logs, log := logBuffer()
	gw, err := host.Gateway(context.Background(), cfg, serverInfo, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		gw.Close()
		if after != nil {
			after()
		}
		wiretest.CheckLog(t, "mcpx (gateway)", logs)
		if secret != "" && strings.Contains(logs.String(), secret) {
			t.Errorf("%q reached mcpx's log:\n%s", secret, logs.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := gw.Ready(ctx); err != nil {
		t.Fatalf("gateway Ready: %v\n%s", err, logs.String())
	}
	return gw, logs
}
