package gatewaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/testkit/closedworld"
	"github.com/mcpx-dev/mcpx/testkit/revs"
	"github.com/mcpx-dev/mcpx/testkit/wiretest"
)

// upstream is one upstream server of the gateway and what a client should
// get from it through mcpx.
type upstream struct {
	ns   string            // its namespace: the config's server name
	rev  string            // the revision it is pinned to, which mcpx must pick
	cmd  string            // the command the config runs
	args []string          // its arguments
	env  map[string]string // its environment, besides the recorder's

	tool        string         // a tool, unprefixed, and what calling it returns
	toolArgs    map[string]any //
	wantTool    string         //
	uri         string         // a resource, as the upstream names it, and its text
	wantRead    string         //
	prompt      string         // a prompt, unprefixed, and its first message's text
	promptArgs  map[string]string
	wantPrompt  string
	complPrompt string   // a prompt to complete an argument of ("": prompt)
	complArg    string   // its argument to complete
	complValue  string   // from this value
	wantCompl   []string // to these values

	record string // the file its stdin recorder writes
}

// flat is a revision as a namespace spells it: 2024-11-05 -> 20241105.
func flat(rev string) string { return strings.ReplaceAll(rev, "-", "") }

// sdkUpstream is a go-sdk ("gosdk") or mcp-go ("mcpgo") server pinned to
// rev, run by re-executing the test binary.
func sdkUpstream(kind, rev string) upstream {
	who := kind + "@" + rev
	return upstream{
		ns: kind + "-" + flat(rev), rev: rev, cmd: os.Args[0],
		env:  map[string]string{envUpstream: kind + ":" + rev},
		tool: echoTool, toolArgs: map[string]any{"text": "ünïcode ✓"}, wantTool: echoed(who, "ünïcode ✓"),
		uri: infoURI, wantRead: infoText(who),
		prompt: greetPrompt, promptArgs: map[string]string{"name": "Ada"}, wantPrompt: greeting(who, "Ada"),
		complArg: "name", complValue: "A", wantCompl: completions(who, "A"),
	}
}

// fixtureUpstream is the mcpx-fixture binary, behind the test binary's
// stdin checker. It is mcpx and speaks every revision, so mcpx must reach
// it at the newest: a modern one, found by the era probe.
func fixtureUpstream() upstream {
	rev := string(revs.NewestModern())
	return upstream{
		ns: "fixture", rev: rev, cmd: os.Args[0], args: []string{fixtureBin},
		env:  map[string]string{envUpstream: "exec:" + rev},
		tool: "test_simple_text", toolArgs: map[string]any{}, wantTool: "This is a simple text response for testing.",
		uri: "test://static-text", wantRead: "This is the content of the static text resource.",
		prompt: "test_prompt_with_arguments", promptArgs: map[string]string{"arg1": "a", "arg2": "b"},
		wantPrompt: "Prompt with arguments: arg1='a', arg2='b'",
		complArg:   "arg1", complValue: "test", wantCompl: []string{"testValue1"},
	}
}

// matrixUpstreams are the gateway's upstreams: go-sdk and mcp-go servers
// pinned to each revision in the tables they speak, and the fixture.
func matrixUpstreams() []upstream {
	var ups []upstream
	for _, s := range []struct {
		kind string
		peer revs.Peer
	}{{"gosdk", goSDKUpstreamPeer}, {"mcpgo", mcpGoUpstreamPeer}} {
		for _, rev := range revisionsOf(s.peer) {
			ups = append(ups, sdkUpstream(s.kind, rev))
		}
	}
	return append(ups, fixtureUpstream())
}

// startGateway builds the gateway of ups the way `mcpx serve --config`
// does (config.Parse, host.Gateway) and waits for every upstream's first
// load. When the test ends it closes the gateway (stopping every
// upstream), validates what mcpx sent each upstream (checkUpstreamWire),
// and fails on an error in mcpx's log.
func startGateway(t *testing.T, ups []upstream) (*gateway.Gateway, *wiretest.LockedBuffer) {
	t.Helper()
	dir := t.TempDir()
	servers := map[string]any{}
	for i := range ups {
		u := &ups[i]
		env := map[string]string{}
		for k, v := range u.env {
			env[k] = v
		}
		if u.cmd == os.Args[0] {
			// A race-enabled binary sleeps 1s at exit (atexit_sleep_ms),
			// and the gateway stops its upstreams one after another.
			env["GORACE"] = strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
			u.record = filepath.Join(dir, u.ns+".in")
			env[envRecord] = u.record
		}
		srv := map[string]any{"command": u.cmd, "env": env, "mcpx": map[string]any{"timeout": "30s"}}
		if u.args != nil {
			srv["args"] = u.args
		}
		servers[u.ns] = srv
	}
	data, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("gatewaytest.json", data, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("config.Parse:\n%v\n%s", err, data)
	}
	logs, log := logBuffer()
	gw, err := host.Gateway(context.Background(), cfg, serverInfo, log)
	if err != nil {
		t.Fatalf("host.Gateway: %v", err)
	}
	t.Cleanup(func() {
		start := time.Now()
		if err := gw.Close(); err != nil {
			t.Errorf("gateway Close: %v", err)
		}
		t.Logf("gateway Close took %s", time.Since(start).Round(time.Millisecond))
		for _, u := range ups {
			if u.record == "" {
				continue
			}
			checkUpstreamWire(t, u)
		}
		checkConnected(t, logs, ups)
		wiretest.CheckLog(t, "mcpx (gateway)", logs)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	if err := gw.Ready(ctx); err != nil {
		t.Fatalf("gateway Ready: %v", err)
	}
	t.Logf("gateway Ready after %s", time.Since(start).Round(time.Millisecond))
	return gw, logs
}

// checkUpstreamWire validates every message mcpx sent u, as its stdin
// recorder wrote them down, for u's revision (checkToUpstream), and checks
// that no request id was used twice on one connection ("The request ID
// MUST NOT have been previously used by the requestor within the same
// session": basic/index, every revision).
func checkUpstreamWire(t *testing.T, u upstream) {
	t.Helper()
	v, err := closedworld.Default()
	if err != nil {
		t.Fatalf("closed-world validator: %v (run `make schemas`)", err)
	}
	recs := readRecords(t, u.record)
	if len(recs) == 0 {
		t.Errorf("upstream %s: mcpx sent it nothing", u.ns)
		return
	}
	t.Logf("upstream %s (%s): %d messages from mcpx closed-world validated", u.ns, u.rev, len(recs))
	if showWire {
		t.Logf("mcpx to upstream %s:\n%s", u.ns, strings.Join(recs, "\n"))
	}
	ids := map[string]string{} // request id -> the method that used it first
	var reused []string
	for i, line := range recs {
		if rev, err := checkToUpstream(v, u.rev, []byte(line)); err != nil {
			t.Errorf("upstream %s: mcpx sent it, as message %d (checked at %s):\n%s\nclosed-world validator: %v", u.ns, i+1, rev, line, err)
		}
		var f wiretest.Frame
		if json.Unmarshal([]byte(line), &f) != nil || !f.IsRequest() {
			continue
		}
		if prev, ok := ids[wiretest.IDKey(f.ID)]; ok {
			reused = append(reused, fmt.Sprintf("id %s, first used by %s, again for %s", f.ID, prev, f.Method))
		} else {
			ids[wiretest.IDKey(f.ID)] = f.Method
		}
	}
	if len(reused) > 0 {
		// Every revision: an id MUST NOT be reused within a session.
		t.Errorf("mcpx reused request ids on its connection to upstream %s: %s", u.ns, strings.Join(reused, "; "))
	}
}

// readRecords reads a file of records the stdin recorder wrote; a missing
// file has none.
func readRecords(t *testing.T, path string) []string {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Errorf("%v", err)
		return nil
	}
	var out []string
	for _, r := range strings.Split(string(b), "\n"+recordSep+"\n") {
		if r = strings.TrimSpace(r); r != "" && r != recordSep {
			out = append(out, r)
		}
	}
	return out
}

var connectedLine = regexp.MustCompile(`msg="upstream connected".* upstream=(\S+) revision=(\S+)`)

// checkConnected checks, from mcpx's log, that mcpx connected to every
// upstream at the revision it is pinned to, and never at another.
func checkConnected(t *testing.T, logs *wiretest.LockedBuffer, ups []upstream) {
	t.Helper()
	got := map[string][]string{}
	for _, m := range connectedLine.FindAllStringSubmatch(logs.String(), -1) {
		got[m[1]] = append(got[m[1]], m[2])
	}
	for _, u := range ups {
		revs := got[u.ns]
		if len(revs) == 0 {
			t.Errorf("upstream %s: mcpx never logged connecting to it", u.ns)
		}
		for _, r := range revs {
			if r != u.rev {
				t.Errorf("upstream %s is pinned to %s; mcpx connected at %s", u.ns, u.rev, r)
			}
		}
	}
}

// TestMatrix runs each client pinned to each revision through one gateway
// that fronts an upstream pinned to each revision: tools/list, tools/call,
// resources/read, prompts/get and completion/complete reach every upstream
// and come back with its content. What mcpx sends each client is
// closed-world validated for the client's revision, and what it sends each
// upstream for the upstream's.
func TestMatrix(t *testing.T) {
	ups := matrixUpstreams()
	gw, logs := startGateway(t, ups)
	t.Run("mcpx picked each upstream's pinned revision", func(t *testing.T) {
		checkConnected(t, logs, ups)
	})
	type cell struct{ client, transport, rev string }
	var cells []cell
	for _, c := range []string{goSDK, mcpGo} {
		for _, rev := range revisionsOf(clientPeers[c]) {
			cells = append(cells, cell{c, "http", rev})
		}
	}
	// stdio for a subset: the oldest and the newest revision per client.
	for _, c := range []string{goSDK, mcpGo} {
		revisions := revisionsOf(clientPeers[c])
		cells = append(cells, cell{c, "stdio", revisions[0]}, cell{c, "stdio", revisions[len(revisions)-1]})
	}
	for _, c := range cells {
		t.Run(fmt.Sprintf("%s over %s pinned to %s", c.client, c.transport, c.rev), func(t *testing.T) {
			t.Parallel()
			var conn connection
			if c.transport == "http" {
				conn.url, conn.http = serveHTTP(t, gw, c.rev)
			} else {
				conn.reader, conn.writer = serveStdio(t, gw, c.rev)
			}
			s := connect(t, c.client, c.rev, conn)
			exercise(t, s, c.rev, ups)
		})
	}
}

// exercise runs one session through every upstream.
func exercise(t *testing.T, s session, rev string, ups []upstream) {
	ctx := t.Context()
	if got := s.negotiated(); got != rev {
		t.Errorf("negotiated %q, want the pinned %q", got, rev)
	}
	names, err := s.tools(ctx)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	for _, n := range names {
		if !gateway.ValidName(n) {
			t.Errorf("tools/list: %q is not a valid exposed name", n)
		}
		if !slices.ContainsFunc(ups, func(u upstream) bool { return strings.HasPrefix(n, u.ns+"__") }) {
			t.Errorf("tools/list: %q has no upstream's prefix", n)
		}
	}
	for _, u := range ups {
		t.Run(fmt.Sprintf("upstream %s", u.ns), func(t *testing.T) {
			tool := u.ns + "__" + u.tool
			if !slices.Contains(names, tool) {
				t.Errorf("tools/list has no %s", tool)
			}
			if text, isErr, err := s.call(ctx, tool, u.toolArgs); err != nil || isErr || text != u.wantTool {
				t.Errorf("tools/call %s: text %q isError %v err %v; want %q", tool, text, isErr, err, u.wantTool)
			}
			uri := gateway.ExposedURI(u.ns, u.uri)
			if gotURI, text, err := s.read(ctx, uri); err != nil || gotURI != uri || text != u.wantRead {
				t.Errorf("resources/read %s: uri %q text %q err %v; want %q", uri, gotURI, text, err, u.wantRead)
			}
			prompt := u.ns + "__" + u.prompt
			if text, err := s.prompt(ctx, prompt, u.promptArgs); err != nil || text != u.wantPrompt {
				t.Errorf("prompts/get %s: text %q err %v; want %q", prompt, text, err, u.wantPrompt)
			}
			if u.complPrompt != "" {
				prompt = u.ns + "__" + u.complPrompt
			}
			vals, err := s.complete(ctx, prompt, u.complArg, u.complValue)
			if err != nil || !slices.Equal(vals, u.wantCompl) {
				t.Errorf("completion/complete %s %s=%q: %q err %v; want %q", prompt, u.complArg, u.complValue, vals, err, u.wantCompl)
			}
		})
	}
}
