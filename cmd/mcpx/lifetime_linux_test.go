package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startWithUpstream runs `mcpx stdio` fronting one eager upstream, the
// shell script script (run in dir), with stdin held open, and returns it
// once the script has written the file want.
func startWithUpstream(t *testing.T, dir, script, want string) *exec.Cmd {
	t.Helper()
	cfg := filepath.Join(dir, "mcpx.json")
	js := `{"mcpServers": {"up": {"command": "sh", "args": ["-c", ` + strconv.Quote(script) + `], "cwd": ` + strconv.Quote(dir) + `, "mcpx": {"start": "eager", "timeout": "60s"}}}}`
	if err := os.WriteFile(cfg, []byte(js), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mcpxBin(t), "stdio", "--config", cfg)
	if _, err := cmd.StdinPipe(); err != nil { // held open: mcpx waits for a client
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(dir, want)); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the upstream did not start; mcpx said:\n%s", stderr.String())
		}
	}
	return cmd
}

// pidIn reads the pid the upstream wrote to file, and makes sure that
// process is killed when the test ends.
func pidIn(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// gone waits up to d for process pid to be gone (or a zombie, dead but
// not reaped by whoever adopted it).
func gone(pid int, d time.Duration) bool {
	for start := time.Now(); time.Since(start) < d; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		if i := bytes.LastIndexByte(b, ')'); i > 0 && len(b) > i+2 && b[i+2] == 'Z' {
			return true
		}
	}
	return false
}

// TestUpstreamDiesWithMcpx: after a SIGKILL of mcpx, which runs no code of
// its own, its upstream process is gone too (Pdeathsig).
func TestUpstreamDiesWithMcpx(t *testing.T) {
	dir := t.TempDir()
	cmd := startWithUpstream(t, dir, `echo $$ > pid; exec sleep 600`, "pid")
	pid := pidIn(t, filepath.Join(dir, "pid"))
	cmd.Process.Kill()
	cmd.Wait()
	if !gone(pid, 3*time.Second) {
		t.Fatalf("the upstream process %d outlived a SIGKILL of mcpx", pid)
	}
}

// TestDescendantThatLeftTheGroupDies: a descendant of an upstream that left
// its process group (setsid) is killed when mcpx shuts down on SIGTERM,
// and mcpx exits 0.
func TestDescendantThatLeftTheGroupDies(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid command")
	}
	dir := t.TempDir()
	cmd := startWithUpstream(t, dir, `setsid sleep 600 & echo $! > escaped; exec sleep 600`, "escaped")
	pid := pidIn(t, filepath.Join(dir, "escaped"))
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) { // setsid runs after the shell wrote the pid
		pgid, _ := syscall.Getpgid(pid)
		if pgid == pid {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("the descendant %d did not leave the group (its group is %d)", pid, pgid)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := exitCode(t, cmd, 10*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM; want 0", code)
	}
	if !gone(pid, 3*time.Second) {
		t.Fatalf("the descendant %d that left its upstream's group outlived mcpx", pid)
	}
}
