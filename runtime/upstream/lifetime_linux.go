package upstream

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// How no upstream process outlives mcpx on Linux:
//
//   - Each is started in its own process group (Setpgid), which is
//     killed whole when the process is closed or exits (stdio.go).
//   - Each gets SIGKILL when mcpx dies, however it dies (Pdeathsig):
//     a SIGKILL of mcpx leaves no upstream process behind. The kernel sends
//     it when the thread that started the process ends, not the process,
//     so processes are started from one goroutine locked to its thread for
//     good (spawn), a thread that ends only with mcpx.
//   - mcpx can be a child subreaper (Subreaper, which mcpx serve and mcpx
//     stdio call): a descendant that left its upstream's group (setsid)
//     and whose parent died is then adopted by mcpx rather than by init.
//     When an upstream process exits, the adopted processes that carry its
//     mark in their environment (envMark, which descendants inherit) are
//     killed and reaped; at mcpx's exit (KillAdopted), every adopted one.
//
// What remains: after a SIGKILL of mcpx, a descendant of an upstream other
// than the process itself (npx's node) gets no signal from the kernel; it
// finds its input closed (mcpx held the pipe's other end), on which an MCP
// server exits, and one that does not is left running.

// spawnReq asks the spawning thread to start cmd.
type spawnReq struct {
	cmd  *exec.Cmd
	done chan error
}

var (
	spawns chan spawnReq

	// procs are the processes started here and not yet waited for: a
	// sweep never reaps one (cmd.Wait does). mu is held from a start to
	// its registration and through a sweep.
	procsMu sync.Mutex
	procs   = map[int]bool{}

	// adopting is set by Subreaper: only then are the children of mcpx
	// other than upstream processes its adopted ones, to kill and reap.
	adopting atomic.Bool
)

// sysProcAttr is what every upstream process is started with.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// The spawning goroutine starts with the program, so that it is there
// before anything counts goroutines (leak checks in tests); it never ends.
func init() {
	spawns = make(chan spawnReq)
	go func() {
		runtime.LockOSThread() // never unlocked: this thread lives as long as mcpx
		for r := range spawns {
			procsMu.Lock()
			err := r.cmd.Start()
			if err == nil {
				procs[r.cmd.Process.Pid] = true
			}
			procsMu.Unlock()
			r.done <- err
		}
	}()
}

// startCmd starts cmd from the spawning thread (see Pdeathsig above) and
// registers its pid until forgetCmd.
func startCmd(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	spawns <- spawnReq{cmd, done}
	return <-done
}

// forgetCmd is called once cmd.Wait has returned.
func forgetCmd(cmd *exec.Cmd) {
	procsMu.Lock()
	delete(procs, cmd.Process.Pid)
	procsMu.Unlock()
}

// Subreaper makes mcpx the child subreaper of its descendants (Linux
// PR_SET_CHILD_SUBREAPER): an upstream's descendant whose parent dies is
// adopted by mcpx, which can then kill it (see KillAdopted).
func Subreaper() error {
	const prSetChildSubreaper = 36
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return e
	}
	adopting.Store(true)
	return nil
}

// KillAdopted kills and reaps every child of mcpx it did not start as an
// upstream process (descendants adopted as subreaper), and those they
// leave behind in turn, for at most d. mcpx calls it on its way out,
// after closing its upstreams.
func KillAdopted(d time.Duration) { sweep("", d) }

// sweepMark kills and reaps the adopted processes marked as mark's.
func sweepMark(mark string) { sweep(mark, time.Second) }

// sweep kills and reaps the children of mcpx that are not registered
// upstream processes: those whose environment holds mark, or all of them
// when mark is "". Zombies among them are reaped whatever their mark.
// Killing one may leave its own children to mcpx, so it goes round until
// none is left or d has passed.
func sweep(mark string, d time.Duration) {
	if !adopting.Load() {
		return // the children of a process that is not a subreaper are its own business
	}
	deadline := time.Now().Add(d)
	self := os.Getpid()
	for {
		procsMu.Lock()
		var took []int
		for _, pid := range childrenOf(self) {
			if procs[pid] {
				continue
			}
			zombie := state(pid) == 'Z'
			if !zombie && mark != "" && !hasEnv(pid, mark) {
				continue
			}
			if !zombie {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			took = append(took, pid)
		}
		procsMu.Unlock()
		for _, pid := range took {
			for {
				var ws syscall.WaitStatus
				if n, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); n != 0 || (err != nil && err != syscall.EINTR) || time.Now().After(deadline) {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		if len(took) == 0 || time.Now().After(deadline) {
			return
		}
	}
}

// childrenOf are the pids whose parent is ppid, from /proc.
func childrenOf(ppid int) []int {
	// /proc/PID/task/*/children lists them, but only with
	// CONFIG_PROC_CHILDREN; every process's stat is always there.
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, dir := range dirs {
		pid, err := strconv.Atoi(filepath.Base(dir))
		if err != nil {
			continue
		}
		if p, _ := statField(pid); p == ppid {
			out = append(out, pid)
		}
	}
	return out
}

// statField reads the parent pid and state of pid from /proc/PID/stat.
func statField(pid int) (ppid int, st byte) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1, 0
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1, 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return -1, 0
	}
	ppid, err = strconv.Atoi(f[1])
	if err != nil {
		return -1, 0
	}
	return ppid, f[0][0]
}

func state(pid int) byte { _, st := statField(pid); return st }

// hasEnv reports whether pid's initial environment holds the entry kv.
func hasEnv(pid int, kv string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, e := range bytes.Split(b, []byte{0}) {
		if string(e) == kv {
			return true
		}
	}
	return false
}
