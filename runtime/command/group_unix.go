//go:build unix

package command

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the program in a process group of its own, and makes a
// cancelled run kill that group: a shell script's children go with it.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// reap kills what is left of the group once the program ended: a
// descendant it left running in the background does not outlive the call.
func reap(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
