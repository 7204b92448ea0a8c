//go:build !linux

package upstream

import (
	"os/exec"
	"syscall"
	"time"
)

// Outside Linux there is no Pdeathsig or child subreaper: an upstream
// process runs in its own process group, killed whole when it is closed
// or exits (stdio.go), and finds its input closed when mcpx dies.

func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

func forgetCmd(*exec.Cmd) {}

// Subreaper does nothing outside Linux.
func Subreaper() error { return nil }

// KillAdopted does nothing outside Linux.
func KillAdopted(time.Duration) {}

func sweepMark(string) {}
