package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/admin"
	"github.com/mcpx-dev/mcpx/runtime/auth"
	"github.com/mcpx-dev/mcpx/runtime/budget"
	"github.com/mcpx-dev/mcpx/runtime/cluster"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/demo"
	"github.com/mcpx-dev/mcpx/runtime/fixture"
	"github.com/mcpx-dev/mcpx/runtime/gcfloor"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tracing"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/runtime/upstream"
)

// version is mcpx's own version, reported as serverInfo.
const version = "0.1.0"

// tracingFlushTimeout bounds how long mcpx waits on exit for the spans
// still queued to reach the OTLP collector.
const tracingFlushTimeout = 5 * time.Second

// builtins are the namespaces mcpx can serve without a config file.
// Each seals the requestState of its input_required rounds with the key
// a gateway would use (MCPX_STATE_KEY, else one of the process's own).
var builtins = map[string]func(*requeststate.Sealer) server.Namespace{
	"demo":    demo.NewWith,
	"fixture": func(s *requeststate.Sealer) server.Namespace { return fixture.NewWith(s) },
}

// defaultGCFloor is --gc-floor's default (BENCHMARKS.md, seventh round).
const defaultGCFloor = 32 << 20

// memProfileRate is the allocation sampling rate mcpx runs at: none
// without the admin listener, whose /debug/pprof/heap is the only way to
// read what is sampled (a sample takes a stack trace, each 512 kB
// allocated: 4 % of the gateway's CPU on a 64 kB call), else the runtime's
// (current), as it is when GODEBUG sets one.
func memProfileRate(adminAddr, godebug string, current int) int {
	if adminAddr != "" || strings.Contains(godebug, "memprofilerate") {
		return current
	}
	return 0
}

// runServe runs `mcpx serve` (Streamable HTTP) or `mcpx stdio`.
func runServe(cmd string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpx "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "", "a config file of upstream servers (the mcpServers JSON of Claude Desktop, VS Code, Cursor); each server becomes a namespace")
	watch := fs.Bool("watch", false, "reload the config file when it changes (SIGHUP reloads it too)")
	builtin := fs.String("builtin", "demo", "the built-in namespace to serve without a config: demo or fixture (the conformance surface)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to `FILE` until mcpx exits, for go tool pprof (performance work)")
	logFormat := fs.String("log-format", "text", "mcpx's own log on standard error: text or json")
	logLevel := fs.String("log-level", "info", "the least level logged: debug, info, warn or error (at info: one line per upstream event, none per successful call)")
	gcFloor := fs.Int64("gc-floor", defaultGCFloor, "`bytes` of heap the Go collector lets mcpx reach before it runs (above half of it, GOGC applies as usual); fewer collections for a little memory: 0 turns it off, as does setting GOGC unless this is given too")
	largeBudget := fs.Int64("large-budget", 0, "`bytes` that messages over 1 MiB (requests read, upstream answers) may take in flight at once, process-wide; beyond, one waits 5s, then is refused: 503 or -32603, the server is busy (0: 256 MiB)")
	var taskFlags config.TaskSettings
	storeURL := fs.String("store", "memory", "where tasks are kept: memory, or a Redis URL (redis://[:password@]host:port[/db], rediss:// for TLS) shared by replicas; $MCPX_STORE, when set, is used instead of memory (keeping a password out of the command line)")
	fs.DurationVar(&taskFlags.Eager, "task-eager", 0, "how long a call of a tool that supports tasks may run before a 2026-07-28 client gets a task for it; overrides mcpx.taskEager (0: 250ms)")
	fs.DurationVar(&taskFlags.After, "task-after", 0, "the same for a tool that declares no task support; overrides mcpx.taskAfter (0: 10s)")
	fs.DurationVar(&taskFlags.TTL, "task-ttl", 0, "how long a task is kept from its creation; overrides mcpx.taskTTL (0: 1h)")
	taskLease := fs.Duration("task-lease", 0, "with a shared --store (Redis): how long a task may go without its replica renewing its lease (every third of it) before any replica reports it failed, its replica deemed dead (0: 30s)")
	fs.IntVar(&taskFlags.Max, "max-tasks", 0, "tasks held at once; when full none is evicted and new ones are refused; overrides mcpx.maxTasks (0: 1024)")
	listen, adminAddr := "", ""
	var limits streamhttp.Options
	if cmd == "serve" {
		fs.StringVar(&adminAddr, "admin", "", "serve /metrics, /healthz, /readyz and /debug/pprof/ at `ADDR`, apart from /mcp (a bare port is on 127.0.0.1); off unless given")
		fs.StringVar(&listen, "listen", streamhttp.DefaultAddr, "address to listen on; the endpoint is http://ADDR/mcp")
		fs.IntVar(&limits.MaxInFlight, "max-in-flight", 0, "requests in progress at once; one more is answered 503 (0: 1024)")
		fs.IntVar(&limits.MaxSessions, "max-sessions", 0, "legacy sessions held at once (0: 1024)")
		fs.IntVar(&limits.MaxStreams, "max-streams", 0, "SSE streams held open at once (0: 256)")
		fs.Int64Var(&limits.MaxBody, "max-body", 0, "largest request body in `bytes`; a larger one is answered 413 (0: 4 MiB)")
		fs.DurationVar(&limits.SessionIdle, "session-idle", 0, "how long a legacy session may go unused before it is dropped (0: 30m)")
		fs.DurationVar(&limits.BodyTimeout, "body-timeout", 0, "how long a request body may take to arrive; a slower one is answered 408 (0: 30s)")
		fs.DurationVar(&limits.WriteTimeout, "write-timeout", 0, "how long one write to a client's stream may take; a client that does not read in time has its stream ended (0: 10s)")
	}
	fs.Usage = func() {
		fmt.Fprint(stderr, serveUsage[cmd])
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcpx %s: unexpected argument %q\n", cmd, fs.Arg(0))
		return 2
	}
	if *taskLease < 0 {
		fmt.Fprintf(stderr, "mcpx %s: --task-lease %v: must be more than zero\n", cmd, *taskLease)
		return 2
	}
	if err := checkTaskFlags(taskFlags); err != nil {
		fmt.Fprintf(stderr, "mcpx %s: %v\n", cmd, err)
		return 2
	}
	if *configFile != "" && flagSet(fs, "builtin") {
		fmt.Fprintf(stderr, "mcpx %s: --config and --builtin name two different namespaces; give one\n", cmd)
		return 2
	}
	if *largeBudget < 0 {
		fmt.Fprintf(stderr, "mcpx %s: --large-budget must be positive, or 0 for its default\n", cmd)
		return 2
	}
	if *largeBudget > 0 {
		budget.SetDefault(budget.New(*largeBudget, 0, 0))
	}
	if limits.MaxInFlight < 0 || limits.MaxSessions < 0 || limits.MaxStreams < 0 || limits.MaxBody < 0 {
		fmt.Fprintf(stderr, "mcpx %s: a --max-* limit must be positive, or 0 for its default\n", cmd)
		return 2
	}
	if limits.SessionIdle < 0 || limits.BodyTimeout < 0 || limits.WriteTimeout < 0 {
		fmt.Fprintf(stderr, "mcpx %s: --session-idle, --body-timeout and --write-timeout must be positive, or 0 for their defaults\n", cmd)
		return 2
	}
	if adminAddr != "" {
		if _, err := admin.Addr(adminAddr); err != nil {
			fmt.Fprintf(stderr, "mcpx %s: %v\n", cmd, err)
			return 2
		}
	}
	newNS, ok := builtins[*builtin]
	if !ok {
		fmt.Fprintf(stderr, "mcpx %s: unknown --builtin %q (want demo or fixture)\n", cmd, *builtin)
		return 2
	}
	if *gcFloor < 0 {
		fmt.Fprintf(stderr, "mcpx %s: --gc-floor must be positive, or 0 for none\n", cmd)
		return 2
	}
	if _, gogc := os.LookupEnv("GOGC"); !gogc || flagSet(fs, "gc-floor") {
		defer gcfloor.Start(uint64(*gcFloor)).Stop()
	}
	runtime.MemProfileRate = memProfileRate(adminAddr, os.Getenv("GODEBUG"), runtime.MemProfileRate)
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "mcpx %s: --cpuprofile: %v\n", cmd, err)
			return 1
		}
		defer stop()
	}
	log, err := newLogger(stderr, *logFormat, *logLevel) // stdout carries only protocol
	if err != nil {
		fmt.Fprintf(stderr, "mcpx %s: %v\n", cmd, err)
		return 2
	}
	// Tracing (OTEL_* variables; off when none is set) is flushed last,
	// after the upstreams are closed, so their calls' spans go out too.
	stopTracing, err := tracing.Setup(context.Background(), os.LookupEnv, version, log)
	if err != nil {
		fmt.Fprintf(stderr, "mcpx %s: tracing: %v\n", cmd, err)
		return 1
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
		defer cancel()
		if err := stopTracing(ctx); err != nil {
			log.Warn("flushing the traces", "err", err)
		}
	}()
	info := mcp.Implementation{Name: "mcpx", Title: "mcpx gateway", Version: version}
	// The first SIGINT or SIGTERM shuts down: requests still running get
	// streamhttp's ShutdownGrace (2 s), then a JSON-RPC error saying the
	// server is shutting down; then the upstreams are closed in parallel
	// within gateway.CloseTimeout (5 s); mcpx exits 0. A second signal
	// ends mcpx at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	context.AfterFunc(ctx, stop)
	c := host.Config{Info: info, TTLMs: 60_000, Log: log, HTTP: limits}
	what := "the " + *builtin + " namespace"
	var cfg *config.Config
	c.Tasks = host.TaskOptions(taskFlags)
	if *configFile != "" {
		if cfg, err = config.Load(*configFile); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	var adm *adminListener
	if adminAddr != "" {
		if adm, err = startAdmin(ctx, adminAddr, cfg, log); err != nil {
			fmt.Fprintf(stderr, "mcpx %s: %v\n", cmd, err)
			return 1
		}
		c.Metrics = adm.m
	}
	if cfg != nil {
		// An upstream's descendant that leaves its process group and
		// loses its parent is adopted by mcpx (Linux), to be killed with
		// its upstream or at exit.
		if err := upstream.Subreaper(); err != nil {
			log.Warn("mcpx cannot adopt the orphaned descendants of upstreams; one that leaves its process group may outlive mcpx", "err", err)
		}
		var gopt host.GatewayOptions
		if c.Metrics != nil {
			gopt.Observer = c.Metrics
		}
		g, ups, err := host.GatewayWith(ctx, cfg, info, log, gopt)
		if err != nil {
			fmt.Fprintf(stderr, "mcpx %s: %v\n", cmd, err)
			return 1
		}
		rl := host.NewReloader(*configFile, g, cfg, ups, info, log)
		rl.Observer = gopt.Observer
		if adm != nil {
			adm.built(g, rl.Upstreams)
			// The contributed tools' namespaces (mcpx.commands, OpenAPI)
			// too, and a reload's new ones from then on.
			adm.m.AddNamespaces(rl.Namespaces())
			rl.Named = adm.m.AddNamespaces
		}
		defer func() {
			if err := g.Close(); err != nil { // stops every upstream, in parallel, within gateway.CloseTimeout
				log.Warn("closing the upstreams", "err", err)
			}
			upstream.KillAdopted(time.Second) // what left their groups: no orphans
		}()
		c.NS, what = g, fmt.Sprintf("%s from %s", plural(len(cfg.Servers), "upstream server"), *configFile)
		reloads(ctx, rl, *watch, log)
		c.Reloader, c.APITools = rl, cfg.APITools
		if cfg.Auth != nil {
			if c.Auth, err = auth.New(*cfg.Auth); err != nil {
				fmt.Fprintf(stderr, "mcpx %s: %v\n", cmd, err)
				return 1
			}
			c.Access = cfg.Access
		}
		settings := withTaskFlags(cfg.Tasks, taskFlags)
		// --store, else $MCPX_STORE, else the config's mcpx.store.
		url := *storeURL
		if v, ok := os.LookupEnv("MCPX_STORE"); ok && url == "memory" {
			url = v
		} else if url == "memory" && cfg.Store != "" {
			url = cfg.Store
		}
		store, closeStore, err := host.TaskStore(url, settings.Max, log)
		if err != nil {
			fmt.Fprintf(stderr, "mcpx %s: %v\n", cmd, err)
			return 2
		}
		defer closeStore()
		c.Tasks = host.TaskOptionsIn(settings, store)
		if *taskLease > 0 && c.Tasks.Runner.Lease > 0 {
			c.Tasks.Runner.Lease = *taskLease
		}
		if cmd != "stdio" {
			// The same URL shares the legacy sessions, list changes and
			// parked calls' retries with the other replicas (issue 19).
			cl, err := cluster.Open(url, log)
			if err != nil {
				fmt.Fprintf(stderr, "mcpx %s: %v\n", cmd, err)
				return 2
			}
			defer cl.Close()
			c.Cluster, g.Replica = cl, cl.Bus.ID()
		}
	} else {
		// A built-in namespace seals its requestState as a gateway does;
		// a bad key is refused at startup, as with a config.
		states, _, err := requeststate.Load("", os.LookupEnv)
		if err != nil {
			fmt.Fprintf(stderr, "mcpx %s: the requestState key: %v\n", cmd, err)
			return 1
		}
		c.NS = newNS(states)
		if adm != nil {
			adm.builtin()
		}
	}
	if cmd == "stdio" {
		err = host.Stdio(ctx, c, stdin, stdout)
	} else {
		err = host.HTTP(ctx, c, listen, func(url string) { fmt.Fprintf(stderr, "mcpx: serving %s at %s\n", what, url) })
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "mcpx %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

// serveUsage describes `mcpx serve` and `mcpx stdio` for -h; the flags follow.
var serveUsage = map[string]string{
	"serve": `Usage: mcpx serve [--listen ADDR] [--config FILE | --builtin demo|fixture] [flags]

Serves MCP over Streamable HTTP at http://ADDR/mcp to clients of every
protocol revision, until interrupted. With --config it fronts the upstream
servers the file names, each under its namespace; without it, a built-in
namespace (demo by default).

Flags:
`,
	"stdio": `Usage: mcpx stdio [--config FILE | --builtin demo|fixture] [flags]

Serves MCP on standard input and output, for clients that start their servers
as processes, until standard input ends or mcpx is interrupted. With --config
it fronts the upstream servers the file names, each under its namespace;
without it, a built-in namespace (demo by default). Logs go to standard error.

Flags:
`,
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// plural is "1 noun" or "n nouns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// startCPUProfile profiles mcpx into file until the returned stop runs.
func startCPUProfile(file string) (stop func(), err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// checkTaskFlags refuses a task flag below zero (0 is the default).
func checkTaskFlags(f config.TaskSettings) error {
	switch {
	case f.Eager < 0:
		return fmt.Errorf("--task-eager %v: must be more than zero", f.Eager)
	case f.After < 0:
		return fmt.Errorf("--task-after %v: must be more than zero", f.After)
	case f.TTL < 0:
		return fmt.Errorf("--task-ttl %v: must be more than zero", f.TTL)
	case f.Max < 0:
		return fmt.Errorf("--max-tasks %d: must be at least 1", f.Max)
	}
	return nil
}

// withTaskFlags is the config's task settings with each flag given (not
// 0) in its place.
func withTaskFlags(cfg, flags config.TaskSettings) config.TaskSettings {
	if flags.Eager > 0 {
		cfg.Eager = flags.Eager
	}
	if flags.After > 0 {
		cfg.After = flags.After
	}
	if flags.TTL > 0 {
		cfg.TTL = flags.TTL
	}
	if flags.Max > 0 {
		cfg.Max = flags.Max
	}
	return cfg
}

// reloads applies the config file again on SIGHUP, and on every change
// of it with watch, until ctx is done.
func reloads(ctx context.Context, r *host.Reloader, watch bool, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		defer signal.Stop(hup)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				r.Reload(ctx) // logs what it did, or why not
			}
		}
	}()
	if watch {
		go func() {
			if err := r.Watch(ctx); err != nil {
				log.Error("--watch: the config file cannot be watched; SIGHUP still reloads it", "err", err)
			}
		}()
	}
}
