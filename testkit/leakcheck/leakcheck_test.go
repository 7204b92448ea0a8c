package leakcheck

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// recorder is a testing.TB that keeps the errors reported to it.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()           {}
func (r *recorder) Error(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestFindsLeaks: a goroutine, a child process and a file left behind are
// each reported; nothing is reported when nothing is left.
func TestFindsLeaks(t *testing.T) {
	r := &recorder{TB: t}
	Start(r)()
	if len(r.errs) != 0 {
		t.Fatalf("nothing was left, yet: %q", r.errs)
	}

	stop := make(chan struct{})
	cmd := exec.Command("sleep", "30")
	check := Start(r)
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	go func() { <-stop }()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	check()
	close(stop)
	cmd.Process.Kill()
	cmd.Wait()
	f.Close()
	all := strings.Join(r.errs, "\n")
	for _, want := range []string{"unexpected goroutines", "child processes left running", `"sleep 30"`, "files left open", "-> " + f.Name()} {
		if !strings.Contains(all, want) {
			t.Errorf("the report does not say %q:\n%s", want, all)
		}
	}
}
