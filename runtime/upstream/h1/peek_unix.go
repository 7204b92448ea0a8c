//go:build unix

package h1

import "syscall"

// peekClosed reports whether the connection behind raw is closed or has
// bytes waiting: one read that does not wait (Go keeps every socket
// non-blocking) finds an end of stream, an error or data, or nothing yet
// (EAGAIN), which alone means idle and open. MSG_PEEK leaves what it
// finds where it is.
func peekClosed(raw syscall.RawConn) bool {
	var b [1]byte
	closed := true
	err := raw.Read(func(fd uintptr) bool {
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
		closed = err != syscall.EAGAIN
		return true // done: never wait for the descriptor to be readable
	})
	return err != nil || closed
}
