// Package redistest starts a real redis-server for tests.
package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// Server starts a real redis-server on a free loopback port and returns
// its address, or skips the test when none is installed (fails under
// CI=true, where .ci/run installs Debian's redis-server). It is stopped
// when the test ends.
func Server(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not installed (.ci/run installs Debian's redis-server)")
		}
		t.Skip("redis-server is not installed; apt-get install redis-server")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not listen on %s", addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
