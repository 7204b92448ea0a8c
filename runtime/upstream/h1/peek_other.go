//go:build !unix

package h1

import "syscall"

// peekClosed cannot look without waiting here: a connection is taken as
// open, and a closed one is found by the request sent on it.
func peekClosed(syscall.RawConn) bool { return false }
