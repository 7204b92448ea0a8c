package upstream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// What to install for a command that is not found, for the commands MCP
// servers are most often started with: a newcomer's first failure is
// usually one of these missing.
var commandHints = map[string]string{
	"node":    "install Node.js (https://nodejs.org; on Debian or Ubuntu: apt-get install nodejs npm)",
	"npx":     "install Node.js, which has npx (https://nodejs.org; on Debian or Ubuntu: apt-get install nodejs npm)",
	"npm":     "install Node.js, which has npm (https://nodejs.org; on Debian or Ubuntu: apt-get install nodejs npm)",
	"uvx":     "install uv, which has uvx (https://docs.astral.sh/uv/)",
	"uv":      "install uv (https://docs.astral.sh/uv/)",
	"python":  "install Python 3 (on Debian or Ubuntu: apt-get install python3)",
	"python3": "install Python 3 (on Debian or Ubuntu: apt-get install python3)",
	"pipx":    "install pipx (on Debian or Ubuntu: apt-get install pipx)",
	"docker":  "install Docker (https://docs.docker.com/get-docker/)",
	"go":      "install Go (https://go.dev/dl/)",
	"deno":    "install Deno (https://deno.com)",
	"bun":     "install Bun (https://bun.sh)",
}

// interpreters are commands whose first argument is usually a script:
// a script that does not exist is said before the process starts.
var interpreters = map[string]bool{"node": true, "python": true, "python3": true, "deno": true, "bun": true, "ruby": true, "php": true}

var scriptExts = []string{".js", ".mjs", ".cjs", ".ts", ".py", ".rb", ".php"}

// withSetup is why, followed by what the config says sets the server up,
// when it says something.
func withSetup(why string, spec Spec) string {
	if spec.Setup != "" {
		return why + "; to set this server up: " + strings.TrimSuffix(spec.Setup, ".")
	}
	return why
}

// startErr says why spec's command did not start, and what to install or
// run, without the details of exec's wording (no environment or
// arguments: they may hold secrets).
func startErr(spec Spec, err error) error {
	var pe *fs.PathError
	switch {
	case errors.Is(err, exec.ErrNotFound):
		why := fmt.Sprintf("command %q not found in $PATH", spec.Command)
		if hint, ok := commandHints[filepath.Base(spec.Command)]; ok {
			why += ": " + hint
		} else if spec.Setup == "" {
			why += `: install it, or give its full path as "command"`
		}
		return errors.New(withSetup(why, spec))
	case errors.As(err, &pe) && pe.Op == "fork/exec":
		return fmt.Errorf("%s: %w", withSetup(fmt.Sprintf("cannot start command %q", spec.Command), spec), pe.Err)
	}
	return fmt.Errorf("%s: %w", withSetup(fmt.Sprintf("cannot start command %q", spec.Command), spec), err)
}

// missingScript says, before the process starts, that the script an
// interpreter is given does not exist (node prints a stack trace and
// exits 1, which says less), or returns nil.
func missingScript(spec Spec) error {
	if !interpreters[filepath.Base(spec.Command)] {
		return nil
	}
	for _, a := range spec.Args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if !hasScriptExt(a) {
			return nil
		}
		p, dir := a, spec.Cwd
		if dir == "" {
			dir, _ = os.Getwd()
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			why := fmt.Sprintf("the script %q it runs does not exist", a)
			if !filepath.IsAbs(a) {
				why += " (in " + dir + ")"
			}
			if spec.Setup == "" {
				why += "; install the server first"
			}
			return errors.New(withSetup(why, spec))
		}
		return nil
	}
	return nil
}

func hasScriptExt(a string) bool {
	for _, e := range scriptExts {
		if strings.HasSuffix(a, e) {
			return true
		}
	}
	return false
}
