package testbin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Errorf("ModuleRoot() = %q, which has no go.mod: %v", root, err)
	}
}

func TestBuildNamesTheMissingPackage(t *testing.T) {
	_, err := Build(t.TempDir(), "./cmd/no-such-command")
	if err == nil || !strings.Contains(err.Error(), "./cmd/no-such-command") {
		t.Errorf("Build of a missing package: err = %v, want an error naming it", err)
	}
}
