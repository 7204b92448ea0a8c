package runtime_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/mcpx-dev/mcpx/"

// TestImportLayers pins the direction data flows in (README, Layout): the
// generated code never imports the runtime; no production package imports
// a test kit (testkit/ sits below the transports it drives, not above
// them); and an upstream client knows nothing of the gateway that uses it
// (runtime/host wires the two together). Test files are not checked: go
// list's Imports are the production imports only.
func TestImportLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []struct{ from, to, why string }{
		{"generated/", "runtime/", "generated code is below the runtime"},
		{"", "testkit/", "test kits are for tests only"},
		{"runtime/upstream", "runtime/gateway", "the gateway uses upstreams, not the reverse"},
	}
	checked := 0
	for sc := bufio.NewScanner(bytes.NewReader(out)); sc.Scan(); {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		pkg := strings.TrimPrefix(fields[0], module)
		checked++
		for _, imp := range fields[1:] {
			imp, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			for _, f := range forbidden {
				if strings.HasPrefix(pkg, f.from) && strings.HasPrefix(imp, f.to) && !strings.HasPrefix(pkg, "testkit/") {
					t.Errorf("%s imports %s: %s", pkg, imp, f.why)
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("go list named %d packages; expected the whole module", checked)
	}
}
