package bench

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/testkit/testbin"
)

// The gateway benchmark's procs topology runs each party in its own
// process, as they run in production: the client here, the upstream and
// the proxy in front of it in processes of their own. In one process the
// upstream's garbage (the Go SDK's server allocates ~50 kB per call) sets
// the pace of the gateway's collections and is charged to it.
//
// This test binary is also the upstream and the floor proxy: started with
// serveRoleEnv set, TestMain serves that role instead of running tests.
// The gateway is the real mcpx binary, `mcpx serve --config`.

const (
	serveRoleEnv = "MCPX_BENCH_SERVE"    // upstream-mcpx, upstream-gosdk, floor or listen
	upstreamEnv  = "MCPX_BENCH_UPSTREAM" // the floor's upstream endpoint

	// profileEnv, set to a path prefix, has each mcpx the benchmark
	// starts write a CPU profile to PREFIX.UPSTREAM (mcpx --cpuprofile).
	profileEnv = "MCPX_BENCH_CPUPROFILE"
	// gatewayFlagsEnv holds more flags for each `mcpx serve` the
	// benchmark starts, for an A/B of one setting in the same binary
	// (MCPX_BENCH_GATEWAY_FLAGS="--gc-floor 0").
	gatewayFlagsEnv = "MCPX_BENCH_GATEWAY_FLAGS"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(serveRoleEnv); role != "" {
		if run := stdioRoles[role]; run != nil { // load_test.go
			if err := run(); err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				os.Exit(1)
			}
			os.Exit(0)
		}
		if err := serveRole(role, os.Getenv(upstreamEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// serveRole serves role on a free loopback port, writes "serving URL" to
// stdout and stops when stdin closes, so a child never outlives its test.
func serveRole(role, upstream string) error {
	var h http.Handler
	switch role {
	case "upstream-mcpx":
		h = echoUpstream()
	case "upstream-gosdk":
		h = sdkEchoUpstream()
	case "upstream-gosdk-sse":
		h = sdkEventStreamUpstream()
	case "floor":
		h = byteProxy(upstream)
	case "listen":
		h = listenServer() // listen_test.go
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("serving http://%s/mcp\n", l.Addr())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		l.Close()
	}()
	// GET /conns answers how many connections the role has accepted.
	var conns atomic.Int64
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("GET /conns", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, conns.Load()) })
	srv := &http.Server{Handler: mux, ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}}
	if err := srv.Serve(l); !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// accepted is how many connections the party has accepted so far (its
// GET /conns, on a connection of its own, which it counts), or -1 when it
// does not say.
func (p *party) accepted() int64 {
	defer acceptedClient.CloseIdleConnections()
	resp, err := acceptedClient.Get(strings.TrimSuffix(p.url, "/mcp") + "/conns")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	n, err := strconv.ParseInt(string(b), 10, 64)
	if resp.StatusCode != http.StatusOK || err != nil {
		return -1
	}
	return n
}

// party is a process of the benchmark: its endpoint and its CPU time.
type party struct {
	url string
	cmd *exec.Cmd
}

// start runs cmd and waits for the line naming its endpoint: "serving
// URL" on stdout from a role, "... at URL" on stderr from mcpx. The rest
// of its output is discarded; it stops when the test ends.
func start(tb testing.TB, cmd *exec.Cmd, fromStderr bool) *party {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	var out io.Reader
	if fromStderr {
		out, err = cmd.StderrPipe()
	} else {
		out, err = cmd.StdoutPipe()
	}
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		found := false
		for s.Scan() { // to the end: a full pipe would block the child
			if i := strings.Index(s.Text(), "http://"); i >= 0 && !found {
				urls <- s.Text()[i:]
				found = true
			}
		}
	}()
	select {
	case u := <-urls:
		return &party{url: u, cmd: cmd}
	case <-time.After(30 * time.Second):
		tb.Fatalf("%s did not say where it listens within 30 s", cmd.Path)
		return nil
	}
}

// startRole runs this test binary as role.
func startRole(tb testing.TB, role, upstream string) *party {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serveRoleEnv+"="+role, upstreamEnv+"="+upstream)
	return start(tb, cmd, false)
}

// binDir holds the mcpx binary built for the benchmark, removed after it.
var binDir string

var mcpxBin = sync.OnceValues(func() (string, error) {
	var err error
	if binDir, err = os.MkdirTemp("", "mcpx-bench"); err != nil {
		return "", err
	}
	return testbin.Build(binDir, "./cmd/mcpx")
})

// startMCPX runs `mcpx serve` with one upstream server, "up", at url;
// name names the upstream in a profile's file name.
func startMCPX(tb testing.TB, name, upstream string) *party {
	bin, err := mcpxBin()
	if err != nil {
		tb.Fatal(err)
	}
	cfg := filepath.Join(tb.TempDir(), "mcpx.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"up":{"url":"`+upstream+`"}}}`), 0o600); err != nil {
		tb.Fatal(err)
	}
	args := []string{"serve", "--config", cfg, "--listen", "127.0.0.1:0"}
	if prefix := os.Getenv(profileEnv); prefix != "" {
		args = append(args, "--cpuprofile", prefix+"."+name)
	}
	args = append(args, strings.Fields(os.Getenv(gatewayFlagsEnv))...)
	return start(tb, exec.Command(bin, args...), true)
}

// acceptedClient asks accepted's question, a connection for each.
var acceptedClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// cpu is the CPU time, user and system, the party has used so far.
func (p *party) cpu() time.Duration {
	return procCPU(p.cmd.Process.Pid)
}

// procCPU reads a process's CPU time from /proc/PID/stat (utime and
// stime, in clock ticks of 10 ms: over a benchmark's thousands of calls
// that is fine enough).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// syscalls counts a process's read and write system calls (syscr and
// syscw of /proc/PID/io: read, recvfrom, write, sendto and their kin).
type syscalls struct{ reads, writes int64 }

// syscalls is the party's count so far; zero where /proc/PID/io cannot
// be read.
func (p *party) syscalls() syscalls {
	var c syscalls
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", p.cmd.Process.Pid))
	if err != nil {
		return c
	}
	for line := range strings.Lines(string(b)) {
		name, value, _ := strings.Cut(strings.TrimSpace(line), ": ")
		n, _ := strconv.ParseInt(value, 10, 64)
		switch name {
		case "syscr":
			c.reads = n
		case "syscw":
			c.writes = n
		}
	}
	return c
}

// selfCPU is the CPU time this process has used, user and system.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
