package upstream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
)

// TestSetupSaid: an upstream that cannot start says, in the client's
// error and in mcpx's log, what to install or run: the thing to install
// for a well-known command not found (npx: Node.js), the config's
// "setup" for a script that does not exist or a process that exits
// before it answers, and what to do for any other command not found.
func TestSetupSaid(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no npx, no node: a machine without Node.js
	const setup = "run `make everything` from the repository root"
	quitter := newProc(t, "quitter", "raw:exit=3").spec
	quitter.Setup = setup
	for _, tc := range []struct {
		spec      Spec
		want, log []string
	}{
		{Spec{Name: "npx", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}},
			[]string{`command "npx" not found in $PATH: install Node.js, which has npx`, "apt-get install nodejs npm"}, nil},
		{Spec{Name: "node", Command: "node", Args: []string{".tools/everything/index.js", "stdio"}, Cwd: t.TempDir(), Setup: setup},
			[]string{`the script ".tools/everything/index.js" it runs does not exist`, "to set this server up: " + setup}, nil},
		{Spec{Name: "other", Command: "mcp-server-nowhere"},
			[]string{`command "mcp-server-nowhere" not found in $PATH: install it, or give its full path as "command"`}, nil},
		{quitter, []string{"exited (exit status 3) before it answered; to set this server up: " + setup},
			[]string{"raw: exiting as asked", setup}},
	} {
		t.Run(tc.spec.Name, func(t *testing.T) {
			defer noLeaks(t)()
			tc.spec.Timeout = 5 * time.Second
			log, logs := newLogCapture()
			g := gateway.New(log)
			g.RetryMin = time.Hour // one load: the first failure's reason stays
			defer g.Close()
			if err := g.Add(New(tc.spec, mcpxInfo, log), gateway.Options{}); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if err := g.Ready(ctx); err != nil {
				t.Fatal(err)
			}
			_, err := g.CallTool(ctx, &mcp.CallToolRequestParams{Name: tc.spec.Name + "__echo"})
			if err == nil {
				t.Fatal("the call succeeded")
			}
			t.Logf("the client's error: %v", err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the client's error does not say %q", w)
				}
			}
			var logged strings.Builder
			logs.mu.Lock() // the process's exit may still be logging
			defer logs.mu.Unlock()
			for _, r := range *logs.recs {
				logged.WriteString(r.msg)
				for k, v := range r.attrs {
					logged.WriteString(" " + k + "=" + v.String())
				}
				logged.WriteString("\n")
			}
			for _, w := range append(tc.want, tc.log...) {
				if !strings.Contains(logged.String(), w) {
					t.Errorf("mcpx's log does not say %q:\n%s", w, logged.String())
				}
			}
		})
	}
}
