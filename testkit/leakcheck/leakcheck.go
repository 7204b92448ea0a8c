// Package leakcheck checks that a test leaves nothing behind: no
// goroutine (go.uber.org/goleak), no child process of the test binary
// still running, and no file descriptor left open (Linux: /proc/self/fd).
// A fault test (an upstream that crashes, hangs, floods; a client that
// stops reading) is where a leak hides, so each one calls [Check].
package leakcheck

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// grace is how long what the test started gets to go once it ended: a
// process being reaped, a connection being closed.
const grace = 3 * time.Second

// Check registers a check, run when t ends after its other cleanups, that
// no goroutine, child process or open file started since the call is
// left. opts are passed to goleak.
func Check(t testing.TB, opts ...goleak.Option) {
	t.Helper()
	t.Cleanup(Start(t, opts...))
}

// Start is [Check] for a caller that runs the check itself (to defer).
func Start(t testing.TB, opts ...goleak.Option) func() {
	t.Helper()
	opts = append(opts, goleak.IgnoreCurrent())
	kids, fds := Children(), openFiles()
	return func() {
		t.Helper()
		goleak.VerifyNone(t, opts...)
		deadline := time.Now().Add(grace)
		for {
			left := newKids(kids)
			if len(left) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("child processes left running: %s", strings.Join(left, "; "))
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		for {
			left := newFiles(fds)
			if len(left) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("files left open: %s", strings.Join(left, ", "))
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// Children are the live (not zombie) child processes of this one.
func Children() []int {
	dirs, _ := os.ReadDir("/proc")
	me := strconv.Itoa(os.Getpid())
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 && f[1] == me && f[0] != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

func newKids(before []int) []string {
	var left []string
	for _, pid := range Children() {
		if !slices.Contains(before, pid) {
			cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			left = append(left, fmt.Sprintf("%d %q", pid, strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " ")))
		}
	}
	return left
}

// openFiles are this process's open descriptors, each as "N -> target";
// none where /proc is not there.
func openFiles() map[string]bool {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	fds := make(map[string]bool, len(ents))
	for _, e := range ents {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil {
			continue // the descriptor ReadDir itself used
		}
		fds[e.Name()+" -> "+target] = true
	}
	return fds
}

// The Go runtime's own descriptors, opened once when the network poller
// starts (the first test to use a socket or a pipe of its own).
var runtimeFiles = []string{"anon_inode:[eventpoll]", "anon_inode:[eventfd]"}

func newFiles(before map[string]bool) []string {
	if before == nil {
		return nil
	}
	var left []string
	for fd := range openFiles() {
		_, target, _ := strings.Cut(fd, " -> ")
		if !before[fd] && !slices.Contains(runtimeFiles, target) {
			left = append(left, fd)
		}
	}
	slices.Sort(left)
	return left
}
