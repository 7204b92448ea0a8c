//go:build !unix

package command

import "os/exec"

// ownGroup kills only the program where there are no process groups.
func ownGroup(cmd *exec.Cmd) {}

func reap(cmd *exec.Cmd) {}
