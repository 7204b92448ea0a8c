// Package upstream is mcpx as a client of one upstream MCP server: it
// starts the server (a process on stdio) or reaches it (Streamable HTTP, or
// the 2024-11-05 HTTP+SSE transport: sse.go),
// finds its era and revision through the edge's [edge.Negotiate], and
// serves the gateway's Upstream interface in hub types (runtime/host
// hands it to the gateway, which checks that it fits). A process that dies
// is restarted on the next call, with exponential backoff; calls that
// outlive their timeout fail with an error naming the upstream.
//
// Every request mcpx sends has a deadline: a call's is its timeout; a
// cancellation's, a reply's to the upstream's own request and the DELETE
// of an HTTP session's is sendWait (5s). Cancellations and replies are
// sent in the background, a bounded number at once, so that they hold
// neither a caller nor the goroutine reading the upstream (its stdout, a
// response stream). The streams held open for the upstream to speak
// unasked (subscriptions/listen, a legacy session's GET) last as long as
// the connection.
package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/observe"
	"github.com/mcpx-dev/mcpx/runtime/server"
	"github.com/mcpx-dev/mcpx/runtime/tracing"
)

// Spec says how to reach one upstream. Exactly one of Command and URL is set.
type Spec struct {
	Name string // the namespace, for errors and logs

	Command string            // stdio: the program
	Args    []string          // its arguments
	Env     map[string]string // added to mcpx's environment
	Cwd     string            // "" is mcpx's working directory
	Setup   string            // what to install or run when it cannot start ("mcpx.setup")

	URL string // Streamable HTTP endpoint, or with SSE the SSE stream's URL
	// SSE: URL is a server on the 2024-11-05 HTTP+SSE transport (config
	// "type": "sse"): a GET stream and the POST endpoint it names.
	SSE     bool
	Headers map[string]string // sent with every request
	// Transport carries the HTTP requests; nil is mcpx's own, a clone of
	// http.DefaultTransport that keeps up to 256 idle connections.
	Transport http.RoundTripper

	// Timeout bounds each call; 0 means 60s. A call whose upstream
	// reports progress for it (the client asked for progress) times out
	// Timeout after the last progress notification, and at most
	// maxProgressExtension (10) times Timeout after it began.
	Timeout time.Duration

	// MaxInFlight is how many calls may be waiting on the upstream at
	// once; 0 means 256. A call beyond it waits for one to end, as long as
	// its Timeout (or the caller's deadline) allows, then fails saying so.
	MaxInFlight int

	// LogRate bounds the lines a second the upstream puts in mcpx's own
	// log (its stderr, log messages no client takes, stdout lines that
	// are not JSON-RPC), after a burst of 5 seconds' worth; the lines
	// beyond are dropped, and how many is logged at most every 5s.
	// 0 means 20; negative means no limit.
	LogRate int

	// Observer is told of every call (metrics, traces); nil observes
	// nothing.
	Observer observe.Observer

	// sendWait bounds each message sent without waiting for an answer
	// and an HTTP session's DELETE; 0 means sendWait. Tests shorten it.
	sendWait time.Duration
	// sendQueue is how many such messages may wait for one of the
	// maxPending sends to end: 0 means maxQueued, below 0 none (tests
	// that look at the drops).
	sendQueue int
}

// defaultLogRate is what Spec.LogRate 0 means, in lines a second.
const defaultLogRate = 20

// logBurst is how many seconds' worth of lines an upstream may log at
// once (Spec.LogRate): a start-up banner passes whole, a flood does not.
const logBurst = 5

// dropReportEvery is how often the count of an upstream's dropped log
// lines is logged while they are being dropped (Spec.LogRate).
const dropReportEvery = 5 * time.Second

// firstID is where request ids start after the handshake's.
const firstID = 100

// Backoff bounds the wait before restarting an upstream that failed.
const (
	minBackoff = 250 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// handlerFunc takes what an upstream sends unasked: its requests and
// notifications. related is the id of the request whose HTTP response
// stream carried m, nil where the transport ties m to no request (stdio,
// the standalone GET stream).
type handlerFunc func(cn conn, m *jsonrpc.Message, related json.RawMessage)

// conn is one live connection to an upstream.
type conn interface {
	// roundTrip sends a request and waits for its response. mcpName is
	// what a 2026-07-28 HTTP request mirrors in its Mcp-Name header (see
	// [mirroredName]), "" for a method that mirrors none.
	roundTrip(ctx context.Context, m *jsonrpc.Message, mcpName string) (*jsonrpc.Message, error)
	// notify sends a notification and waits for it to be taken.
	notify(ctx context.Context, m *jsonrpc.Message) error
	// send sends m (a notification, or a reply to the upstream's
	// request) within sendWait, without holding its caller: see
	// [outbox].
	send(m *jsonrpc.Message)
	// setDialect tells the connection what it negotiated.
	setDialect(d *edge.Dialect)
	// cancelsByNotification reports whether a cancelled request needs
	// notifications/cancelled (stdio, legacy HTTP) or not (modern HTTP).
	cancelsByNotification() bool
	// dead is closed when the connection is gone for good.
	dead() <-chan struct{}
	close() error
}

// Client is one upstream. The zero value is not usable: call [New].
type Client struct {
	spec  Spec
	log   *slog.Logger
	noisy *slog.Logger // log limited by limit: what the upstream makes mcpx log
	limit *logLimit
	info  mcp.Implementation

	changes  chan string
	slots    chan struct{} // one per call in flight: Spec.MaxInFlight
	tokens   sync.Map      // progress token string -> context.Context of the client request
	clocks   sync.Map      // progress token string -> *callClock of the call
	inflight sync.Map      // request id -> *callClock of the call, its caller the client request's context
	nextTok  atomic.Int64

	// The upstream's questions to clients (relay.go).
	relays       chan struct{} // one per question being relayed: maxRelays
	elicits      completions   // URL-mode elicitations awaiting completion (complete.go)
	rootsClients rootsClients  // the client sessions whose calls it served (roots.go)
	res          resourceSubs  // the resources it follows (subscribe.go)
	tasks        sync.Map      // upstream task id -> *taskCall following it (tasks.go)

	// dialect is d for handle, which must not take mu: a connection's
	// reader calls it while ensure holds mu waiting for the handshake.
	dialect atomic.Pointer[edge.Dialect]
	// tasksOf is whether dialect's upstream declared the tasks
	// extension, read once per dialect (AsksByRequest asks on every call
	// of a 2026-07-28 client, and reading it decodes the extensions).
	tasksOf atomic.Pointer[dialectTasks]

	mu       sync.Mutex
	c        conn
	d        *edge.Dialect
	down     bool
	lastErr  error
	retryAt  time.Time
	backoff  time.Duration
	failedAt time.Time // when the last attempt failed or the connection ended; zero while connected
	closed   bool
	status   status        // what Status reports, readable without mu (status.go)
	stop     chan struct{} // closed by Close: ends the listen streams
	watchers sync.WaitGroup
}

// New returns a client for spec; nothing starts until the first call (or
// [Client.Start]). info is mcpx's identity, sent as clientInfo.
func New(spec Spec, info mcp.Implementation, log *slog.Logger) *Client {
	if spec.Timeout <= 0 {
		spec.Timeout = 60 * time.Second
	}
	if spec.MaxInFlight <= 0 {
		spec.MaxInFlight = 256
	}
	if log == nil {
		log = slog.Default()
	}
	if spec.LogRate == 0 {
		spec.LogRate = defaultLogRate
	}
	if spec.sendWait <= 0 {
		spec.sendWait = sendWait
	}
	c := &Client{spec: spec, info: info, log: log.With("upstream", spec.Name), changes: make(chan string, 16), slots: make(chan struct{}, spec.MaxInFlight), relays: make(chan struct{}, maxRelays)}
	c.limit = &logLimit{out: c.log, rate: float64(max(spec.LogRate, 0)), burst: float64(logBurst * max(spec.LogRate, 0)), every: dropReportEvery}
	c.noisy = slog.New(limitedHandler{c.log.Handler(), c.limit})
	// Ids and tokens start above the handshake's (server/discover 0 and
	// 3, initialize 1, logging/setLevel 2): no id may repeat on a
	// connection.
	c.nextTok.Store(firstID)
	c.stop = make(chan struct{})
	return c
}

// Name is the namespace.
// AsksByRequest reports whether the upstream asks its questions as
// requests to its client (a legacy upstream), as the last handshake found;
// true before the first one, when it is not known yet. The gateway parks
// only the calls of such upstreams for a client that answers input_required.
func (c *Client) AsksByRequest() bool {
	d := c.dialect.Load()
	// A modern upstream that makes tasks asks through tasks/get, which
	// mcpx puts to the client as a question of the call (tasks.go).
	return d == nil || d.AsksByRequest() || c.declaresTasks(d)
}

// AsksInTasksOnly reports whether the upstream asks its client only
// within the tasks it makes of calls (a modern upstream that declared the
// tasks extension: it asks through the tasks/get mcpx follows a task
// with), as the last handshake found; false before the first one. Such a
// call is parked only once its task comes (server.TaskParker).
func (c *Client) AsksInTasksOnly() bool {
	d := c.dialect.Load()
	return d != nil && !d.AsksByRequest() && c.declaresTasks(d)
}

// dialectTasks is declaresTasks(d), kept for d.
type dialectTasks struct {
	d        *edge.Dialect
	declared bool
}

// declaresTasks is declaresTasks(d), decoded once per dialect: a
// dialect's capabilities do not change once negotiated (a new handshake
// makes a new one).
func (c *Client) declaresTasks(d *edge.Dialect) bool {
	if t := c.tasksOf.Load(); t != nil && t.d == d {
		return t.declared
	}
	t := &dialectTasks{d: d, declared: declaresTasks(d)}
	c.tasksOf.Store(t)
	return t.declared
}

func (c *Client) Name() string { return c.spec.Name }

// Changes delivers list_changed methods, "down" when a live connection
// is lost and "up" when one is made again. A failed attempt to connect
// sends nothing: its caller's error says why.
func (c *Client) Changes() <-chan string { return c.changes }

func (c *Client) signal(s string) {
	select {
	case c.changes <- s:
	default: // a reader that is behind loses nothing: list changes coalesce
	}
}

// Start connects now (a config's start: eager).
func (c *Client) Start(ctx context.Context) error {
	_, _, err := c.ensure(ctx)
	return err
}

// ensure returns a live, negotiated connection, starting one if needed.
func (c *Client) ensure(ctx context.Context) (conn, *edge.Dialect, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, fmt.Errorf("upstream %q is closed", c.spec.Name)
	}
	if c.c != nil && c.d != nil {
		return c.c, c.d, nil
	}
	if wait := time.Until(c.retryAt); wait > 0 {
		return nil, nil, fmt.Errorf("upstream %q is unavailable (%v); mcpx retries in %s", c.spec.Name, c.lastErr, wait.Round(time.Millisecond))
	}
	// The backoff is the least wait before a restart, not the wait: the
	// restart comes with the next call after it (a gateway's reload, on
	// the gateway's own schedule). So the failure's line says the backoff
	// and this one the delay actually waited.
	if !c.failedAt.IsZero() {
		c.log.Info("upstream restarting", "after", time.Since(c.failedAt).Round(time.Millisecond), "backoff", c.backoff)
		c.status.restarts.Add(1)
	}
	c.status.set(stStarting, "", time.Time{})
	cn, d, err := c.connect(ctx)
	if err != nil {
		err = redact(err)
		if c.backoff == 0 {
			c.backoff = minBackoff
		} else {
			c.backoff = min(2*c.backoff, maxBackoff)
		}
		// A timeout names the upstream and the method itself: the
		// reason kept for the backoff's answer is the rest of it.
		reason, named := err, fmt.Errorf("upstream %q: %w", c.spec.Name, err)
		if te := (*timeoutError)(nil); errors.As(err, &te) {
			reason, named = errors.New(te.reason()), te
		}
		c.failed("upstream unavailable", reason)
		// No "down" here: a gateway would take it as the reason and so
		// hide this error, which its load of the upstream already got.
		return nil, nil, named
	}
	c.c, c.d, c.backoff, c.lastErr, c.failedAt = cn, d, 0, nil, time.Time{}
	c.dialect.Store(d)
	c.status.set(stUp, "", time.Time{})
	c.log.Info("upstream connected", "revision", d.Revision(), "server", d.ServerInfo.Name)
	if c.down {
		c.down = false
		c.signal("up")
	}
	c.watchers.Add(1)
	go c.watch(cn)
	if filter, ok := d.ListenFilter(); ok {
		c.watchers.Add(1)
		go c.listen(cn, d, filter)
	}
	c.watchers.Add(1)
	go c.refollow(cn, d) // subscribe.go
	return cn, d, nil
}

// listen holds a subscriptions/listen open on a modern upstream for as long
// as the connection lives; its tagged list_changed notifications reach
// handle like any other.
func (c *Client) listen(cn conn, d *edge.Dialect, filter mcp.SubscriptionFilter) {
	defer c.watchers.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-cn.dead():
		case <-c.stop:
		}
		cancel()
	}()
	raw, err := d.Request(mcp.MethodSubscriptionsListen, &mcp.SubscriptionsListenRequestParams{Notifications: filter}, nil, "")
	if err != nil {
		c.log.Warn("subscriptions/listen cannot be sent; list changes will not be heard", "err", err)
		return
	}
	id := json.RawMessage(strconv.FormatInt(c.nextTok.Add(1), 10))
	if _, err := cn.roundTrip(ctx, jsonrpc.Request(id, mcp.MethodSubscriptionsListen, raw), ""); err != nil && ctx.Err() == nil {
		c.log.Warn("subscriptions/listen ended; list changes will not be heard until the upstream restarts", "err", redact(err))
	}
}

func (c *Client) connect(ctx context.Context) (conn, *edge.Dialect, error) {
	var cn conn
	var err error
	switch {
	case c.spec.Command != "":
		cn, err = startProcess(c.spec, c.log, c.noisy, c.handle)
	case c.spec.URL != "" && c.spec.SSE:
		// The endpoint event is waited for like a handshake's answer.
		dctx, cancel := context.WithTimeout(ctx, c.spec.Timeout)
		cn, err = dialSSE(dctx, c.spec, c.log, c.noisy, c.handle)
		cancel()
	case c.spec.URL != "":
		cn, err = dialHTTP(c.spec, c.log, c.noisy, c.handle)
	default:
		err = errors.New("the config gives neither a command nor a url")
	}
	if err != nil {
		return nil, nil, err
	}
	// Each handshake request is bounded like a call, so that an upstream
	// that never answers cannot hold ensure (and mu) forever.
	rt := func(ctx context.Context, m *jsonrpc.Message) (*jsonrpc.Message, error) {
		rctx, cancel := context.WithTimeout(ctx, c.spec.Timeout)
		defer cancel()
		resp, err := cn.roundTrip(rctx, m, "")
		if err != nil && errors.Is(rctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, &timeoutError{upstream: c.spec.Name, method: m.Method, after: c.spec.Timeout}
		}
		return resp, err
	}
	d, err := edge.Negotiate(ctx, rt, c.info)
	if err != nil {
		cn.close()
		if te := (*timeoutError)(nil); errors.As(err, &te) {
			err = te // it names the step Negotiate would put before it
		}
		return nil, nil, err
	}
	// A question the upstream asks right after initialized (before this
	// returns) is handled in the negotiated revision, not refused as
	// arriving before the handshake.
	c.dialect.Store(d)
	cn.setDialect(d)
	if n := d.Initialized(); n != nil {
		nctx, cancel := context.WithTimeout(ctx, c.spec.Timeout)
		err := cn.notify(nctx, n)
		cancel()
		if err != nil {
			cn.close()
			return nil, nil, err
		}
	}
	if req := d.SetLevel(); req != nil {
		if _, err := rt(ctx, req); err != nil {
			c.log.Warn("logging/setLevel failed; the upstream's log messages will not reach clients", "err", err)
		}
	}
	return cn, d, nil
}

// watch notices a connection dying and forgets it, so the next call
// restarts the upstream.
func (c *Client) watch(cn conn) {
	defer c.watchers.Done()
	<-cn.dead()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.c != cn {
		return
	}
	c.c, c.d = nil, nil
	if c.closed {
		return
	}
	why := errors.New("its connection ended")
	if p, ok := cn.(interface{ deadErr() error }); ok {
		why = p.deadErr()
	}
	c.backoff = minBackoff
	c.failed("upstream exited", why)
	if !c.down {
		c.down = true
		c.signal("down")
	}
}

// Close stops the upstream and waits for its process to end.
func (c *Client) Close() error {
	c.mu.Lock()
	if !c.closed {
		close(c.stop)
	}
	c.closed = true
	c.status.set(stClosed, "", time.Time{})
	cn := c.c
	c.c, c.d = nil, nil
	c.mu.Unlock()
	var err error
	if cn != nil {
		err = cn.close()
	}
	c.watchers.Wait()
	c.limit.close()
	return err
}

// handle receives what the upstream sends besides responses.
func (c *Client) handle(cn conn, m *jsonrpc.Message, related json.RawMessage) {
	d := c.dialect.Load()
	switch {
	case m.IsRequest() && edge.Relays(m.Method) && d != nil:
		c.relay(cn, d, m, related) // relay.go
	case m.IsRequest():
		// Ping is answered, the rest refused plainly. The reply goes in
		// the background: this goroutine is the one reading the
		// upstream's stdout or a response stream, and an upstream that
		// sends requests without reading its input must not stall it.
		reply := jsonrpc.ErrorResponse(m.ID, jsonrpc.Errorf(jsonrpc.MethodNotFound, nil, "mcpx does not relay %s to its clients", m.Method))
		if m.Method == mcp.MethodPing {
			reply = jsonrpc.Response(m.ID, json.RawMessage(`{}`))
		}
		cn.send(reply)
	case m.Method == mcp.MethodNotificationsProgress && d != nil:
		v, err := d.Notification(m.Method, m.Params)
		p, _ := v.(*mcp.ProgressNotificationParams)
		if err != nil || p == nil {
			return
		}
		if k, ok := c.clocks.Load(string(p.ProgressToken)); ok {
			k.(*callClock).progress() // the call's timeout starts again
		}
		if ctx, ok := c.tokens.Load(string(p.ProgressToken)); ok {
			total := 0.0
			if p.Total != nil {
				total = *p.Total
			}
			server.Progress(ctx.(context.Context), p.Progress, total, p.Message)
		}
	case m.Method == mcp.MethodNotificationsMessage && d != nil:
		// A log message names no request. One on a request's HTTP response
		// stream belongs to that request; otherwise it goes to the client
		// only when exactly one request that asked for logs is running on
		// this upstream, since it could reach the wrong client, and to
		// mcpx's log instead.
		v, err := d.Notification(m.Method, m.Params)
		p, _ := v.(*mcp.LoggingMessageNotificationParams)
		if err != nil || p == nil {
			return
		}
		if target := c.logTarget(related); target != nil && server.LogLevel(target) != "" {
			server.Log(target, p.Level, p.Logger, p.Data)
			return
		}
		c.noisy.Info("upstream log message", "level", p.Level, "logger", p.Logger, "data", string(p.Data))
	case m.Method == mcp.MethodNotificationsToolsListChanged, m.Method == mcp.MethodNotificationsPromptsListChanged,
		m.Method == mcp.MethodNotificationsResourcesListChanged:
		c.signal(m.Method)
	case m.Method == mcp.MethodNotificationsElicitationComplete && d != nil:
		c.completed(d, m) // complete.go
	case (m.Method == mcp.MethodNotificationsResourcesUpdated || m.Method == mcp.MethodNotificationsSubscriptionsAcknowledged) && d != nil:
		c.handleSubscription(d, m) // subscribe.go
	case m.Method == mcp.MethodNotificationsTasksStatus:
		c.taskStatus(m.Params) // tasks.go: wakes the task's poller, goes no further
	}
}

// logTarget is the client request a log message from the upstream
// belongs to: the one whose HTTP response stream carried it, else the only
// running request that asked for logs; nil when no one request is it.
func (c *Client) logTarget(related json.RawMessage) context.Context {
	if related != nil {
		if k, ok := c.inflight.Load(string(related)); ok {
			return k.(*callClock).caller
		}
	}
	var only context.Context
	wanting := 0
	c.inflight.Range(func(_, v any) bool {
		if ctx := v.(*callClock).caller; server.LogLevel(ctx) != "" {
			only, wanting = ctx, wanting+1
		}
		return wanting < 2
	})
	if wanting != 1 {
		return nil
	}
	return only
}

// call sends method with hub params and decodes the hub result.
func (c *Client) call(ctx context.Context, method string, params any) (res any, err error) {
	cn, d, err := c.ensure(ctx)
	if err != nil {
		return nil, err
	}
	var ends callEnds
	ctx, ends.span = d.TraceCall(ctx, c.spec.Name, method, mirroredName(params)) // nil when tracing is off
	if c.spec.Observer != nil {
		ctx, ends.oc = observe.StartCall(ctx, c.spec.Observer, c.spec.Name, method, d.RevisionLabel())
	}
	res, err = c.callOn(ctx, cn, d, method, params, &ends)
	if !ends.parked { // else the parked follow ends them
		ends.end(ctx, err)
	}
	return res, err
}

// callEnds is what ends with a call: its span and its observation (each
// nil when off), and whether its task's follow was parked (it ends them
// then, when it is over).
type callEnds struct {
	span   *tracing.Span
	oc     *observe.Call
	parked bool
}

func (e callEnds) end(ctx context.Context, err error) {
	if e.span != nil {
		e.span.EndCall(err)
	}
	if e.oc != nil {
		e.oc.End(ctx, callOutcome(ctx, err))
	}
}

// callOutcome is a call's outcome for its observer: the upstream's
// JSON-RPC code, or why it got no answer.
func callOutcome(ctx context.Context, err error) int64 {
	if err == nil {
		return observe.OK // before the targets of errors.As, which escape
	}
	var je *jsonrpc.Error
	var te *timeoutError
	switch {
	case errors.As(err, &je):
		return je.Code
	case errors.As(err, &te):
		return observe.Timeout
	case ctx.Err() != nil:
		return observe.Cancelled
	}
	return observe.Failed
}

// callOn is call on the connection cn, negotiated as d. When the
// upstream makes the call a task and the context has a
// [server.TaskParker], the task is followed in the parker's way (parked,
// apart from the client's request) and ends, its follow over, what ends
// the call (ends).
func (c *Client) callOn(ctx context.Context, cn conn, d *edge.Dialect, method string, params any, ends *callEnds) (any, error) {
	// The call's clock: Timeout from the start or from the upstream's
	// last progress notification for the call's token, never more than
	// maxProgressExtension times Timeout in all.
	cctx, clock := startClock(ctx, c.spec.Timeout)
	defer clock.stop()
	parked := false // the maps below are then the parked follow's to clear
	var token json.RawMessage
	if n := server.ProgressToken(ctx); n != nil {
		ctx = guardProgress(ctx) // increasing, from the upstream and its task (taskprogress.go)
		token = json.RawMessage(strconv.Quote("mcpx-" + strconv.FormatInt(c.nextTok.Add(1), 10)))
		c.tokens.Store(string(token), ctx)
		c.clocks.Store(string(token), clock)
		defer func() {
			if !parked {
				c.tokens.Delete(string(token))
				c.clocks.Delete(string(token))
			}
		}()
	}
	// A modern upstream is told what the client behind the call can be
	// asked (what mcpx can relay to it); mcpx's own calls declare nothing.
	// A tools/call also declares the tasks extension: mcpx follows the
	// task itself (tasks.go). (A legacy upstream is told no capabilities
	// per request: RequestFor leaves them out.)
	// Only for a legacy client (mcpx holds the task) or a 2026-07-28 one
	// that declared the extension: to one that did not, the upstream's
	// own answer (a -32021 for a tool it runs only as a task) is the
	// right one, as the extension says.
	caps := server.RelayedCapabilities(ctx)
	if method == mcp.MethodToolsCall && (!server.TakesInputRequired(ctx) || server.DeclaresTasksExtension(ctx)) {
		caps = withTasksExtension(caps)
	}
	restore := tracing.InjectMeta(ctx, params) // the upstream's parent is this call's span
	raw, err := d.RequestFor(method, params, token, server.LogLevel(ctx), caps)
	restore()
	if err != nil {
		return nil, err
	}
	select {
	case c.slots <- struct{}{}:
	case <-cctx.Done():
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("upstream %q: %d calls were in flight (its limit) and none ended in time", c.spec.Name, cap(c.slots))
	}
	held := true
	release := func() {
		if held {
			held = false
			<-c.slots
		}
	}
	defer release()
	// The id's bytes and the request live in the clock, made for the
	// call: two allocations less.
	id := json.RawMessage(strconv.AppendInt(clock.id[:0], c.nextTok.Add(1), 10))
	var mapKey any = string(id) // made an interface once for both uses
	clock.caller = ctx
	c.inflight.Store(mapKey, clock) // its clock paused while the upstream's question waits (relay.go)
	defer func() {
		if !parked {
			c.inflight.Delete(mapKey)
		}
	}()
	clock.req = *jsonrpc.Request(id, method, raw)
	resp, err := cn.roundTrip(cctx, &clock.req, mirroredName(params))
	if err != nil {
		if cctx.Err() != nil && cn.cancelsByNotification() {
			// In the background: the caller's answer does not wait on it.
			cn.send(d.Cancel(id, "the client cancelled or the call timed out"))
		}
		if te := clock.timedOut(c.spec.Name, method); te != nil && ctx.Err() == nil {
			return nil, te
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("upstream %q: %s: %w", c.spec.Name, method, redact(err))
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	if method == mcp.MethodToolsCall {
		// A result of the client's own revision may cross as it came
		// (edge/lane.go); resp.Result is what jsonrpc.Decode read.
		if r := d.LaneResult(ctx, resp.Result); r != nil {
			return r, nil
		}
	}
	res, err := d.Result(method, resp.Result)
	if method == mcp.MethodToolsList && err == nil {
		d.ReadToolExecution(resp.Result, res) // a revision without Tool.execution (edge/uptoolexec.go)
	}
	if err == nil { // before errors.As's target, which escapes
		return res, nil
	}
	if ure := (*edge.UnrelayedResultError)(nil); errors.As(err, &ure) && ure.Kind == "task" {
		// The call goes on as the task (tasks.go), still holding its
		// progress token; its own clock is done. Its in-flight slot is
		// given back: the upstream took the task on (what it runs at once
		// is its own to bound), and what the follow sends it is one short
		// request at a time, each within the call timeout; holding the
		// slot for a task's life (up to its TTL) would let MaxInFlight
		// long tasks shut every other call out.
		clock.stop()
		release()
		if p := server.TaskParkerOf(ctx); p != nil && ends != nil {
			parked, ends.parked = true, true
			return p.ParkTask(ctx, c.parkedFollow(ctx, cn, d, method, ure, token, id, *ends))
		}
		return c.followTask(ctx, cn, d, method, ure)
	}
	return res, err
}

// parkedFollow is the follow of the task ure a parker runs apart from
// the client's request (see server.TaskParker), in a context of its own
// (pctx: the call's, not ended by the client's request, with the
// parker's notifier and asker): the call's progress, from the upstream's
// token and the task's status, goes on increasing to the parker's
// notifier, and the call's maps, span and observation end with it, as
// they would have with the call.
func (c *Client) parkedFollow(ctx context.Context, cn conn, d *edge.Dialect, method string, ure *edge.UnrelayedResultError, token, id json.RawMessage, ends callEnds) func(context.Context) (any, error) {
	return func(pctx context.Context) (res any, err error) {
		defer func() {
			if token != nil {
				c.tokens.Delete(string(token))
				c.clocks.Delete(string(token))
			}
			c.inflight.Delete(string(id))
			ends.end(pctx, err) // not ended by the client's request, as the call's outcome
		}()
		if pg, _ := ctx.Value(progressGuardKey{}).(*progressGuard); pg != nil {
			pg.retarget(pctx)
			pctx = server.WithNotifier(pctx, pg)
		}
		return c.followTask(pctx, cn, d, method, ure)
	}
}

// failed records why the upstream is unavailable, and logs it with msg:
// calls fail with why until the backoff has passed. c.mu is held.
func (c *Client) failed(msg string, why error) {
	c.failedAt = time.Now()
	c.lastErr, c.retryAt = why, c.failedAt.Add(c.backoff)
	c.status.set(stFailed, why.Error(), c.retryAt)
	c.log.Warn(msg, "err", why, "restart", "at the next call after the backoff", "backoff", c.backoff)
}

// timeoutError is a request the upstream did not answer in time, said in
// one sentence naming the upstream, the method and the timeout, each once.
type timeoutError struct {
	upstream, method string
	after            time.Duration
	// progressed: the upstream sent progress; capped: progress had
	// extended the timeout to its maximum, after.
	progressed, capped bool
}

func (e *timeoutError) Error() string { return fmt.Sprintf("upstream %q %s", e.upstream, e.reason()) }

// reason is the sentence without its subject, the upstream.
func (e *timeoutError) reason() string {
	switch {
	case e.capped:
		return fmt.Sprintf("did not answer %s within %s, the most its progress notifications may extend the timeout to", e.method, e.after)
	case e.progressed:
		return fmt.Sprintf("did not answer %s within %s of its last progress notification", e.method, e.after)
	}
	return fmt.Sprintf("did not answer %s within %s", e.method, e.after)
}

// maxProgressExtension bounds how far progress may extend a call: to this
// many times its timeout in all. The lifecycle's Timeouts section lets a
// timeout restart on progress and asks for a maximum regardless; a
// multiple of the configured timeout keeps that maximum in proportion to
// what the config says the upstream's calls take (60s by default: 10
// minutes of work reported as it goes), where one fixed maximum would be
// too short for some upstreams and no bound at all for others.
const maxProgressExtension = 10

// callClock times one call: its timeout, restarted by each progress
// notification, and the maximum, which is not. Its context ends with the
// first of them or with the caller's.
type callClock struct {
	timeout time.Duration
	ctx     context.Context
	cancel  context.CancelCauseFunc
	cc      clockCtx        // the call's context, returned by startClock (one allocation with the clock)
	caller  context.Context // the client request's, when in Client.inflight
	// timer fires at due: the timeout, or the maximum when that comes
	// first or a question holds the timeout (one timer for both: each
	// is a timer's start and stop on every call).
	timer *time.Timer

	mu         sync.Mutex
	due        time.Time // when the timeout passes, as of the last progress
	end        time.Time // when the maximum passes
	progressed bool
	paused     int // questions of the call waiting for the client (relay.go)

	id  [20]byte        // callOn's request id, its bytes (an int64 in decimal)
	req jsonrpc.Message // callOn's request to the upstream
}

// The causes of a call's context ending by its clock.
var (
	errIdle = errors.New("the call's timeout passed")
	errMost = errors.New("the call's longest extension by progress passed")
)

func startClock(ctx context.Context, timeout time.Duration) (context.Context, *callClock) {
	cctx, cancel := context.WithCancelCause(ctx)
	now := time.Now()
	k := &callClock{timeout: timeout, ctx: cctx, cancel: cancel, due: now.Add(timeout), end: now.Add(maxProgressExtension * timeout)}
	k.cc = clockCtx{cctx, k}
	k.timer = time.AfterFunc(timeout, k.fire)
	return &k.cc, k
}

// fire ends the call: at the maximum, when due had reached it (progress
// extended the timeout that far, or a question held it), else at the
// timeout.
func (k *callClock) fire() {
	k.mu.Lock()
	cause := errIdle
	if !k.due.Before(k.end) {
		cause = errMost
	}
	k.mu.Unlock()
	k.cancel(cause)
}

// rearm sets due to now plus the timeout, within the maximum, and the
// timer to fire then; the timer is stopped. k.mu is held.
func (k *callClock) rearm() {
	now := time.Now()
	k.due = now.Add(k.timeout)
	if k.due.After(k.end) {
		k.due = k.end
	}
	k.timer.Reset(k.due.Sub(now))
}

// clockCtx is a call's context: its deadline is when the timeout passes
// as of now (what a write to the upstream waits for at most), or the
// caller's, if sooner.
type clockCtx struct {
	context.Context
	k *callClock
}

func (c *clockCtx) Deadline() (time.Time, bool) {
	c.k.mu.Lock()
	due := c.k.due
	c.k.mu.Unlock()
	if d, ok := c.Context.Deadline(); ok && d.Before(due) {
		return d, true
	}
	return due, true
}

// progress restarts the timeout, unless the call is over.
func (k *callClock) progress() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.paused == 0 && k.timer.Stop() {
		k.progressed = true
		k.rearm()
	}
}

func (k *callClock) stop() {
	k.timer.Stop()
	k.cancel(nil)
}

// timedOut is the error for a call its clock ended, or nil.
func (k *callClock) timedOut(upstream, method string) *timeoutError {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch context.Cause(k.ctx) {
	case errIdle:
		return &timeoutError{upstream: upstream, method: method, after: k.timeout, progressed: k.progressed}
	case errMost:
		return &timeoutError{upstream: upstream, method: method, after: maxProgressExtension * k.timeout, capped: true}
	}
	return nil
}

// mirroredName is the member of a request's params that Mcp-Name mirrors
// (2026-07-28 Streamable HTTP: tools/call and prompts/get name it,
// resources/read gives its uri), read from the hub params before encoding
// rather than parsed back out of the encoded JSON.
func mirroredName(params any) string {
	switch p := params.(type) {
	case *mcp.CallToolRequestParams:
		return p.Name
	case *mcp.GetPromptRequestParams:
		return p.Name
	case *mcp.ReadResourceRequestParams:
		return p.URI
	}
	return ""
}

// Call sends a request in hub types and returns its hub result; the
// generated mcp.<Method> functions (mcp.CallTool, mcp.ListTools, ...) call
// through it. A method the upstream's revision lacks is -32601 naming the
// upstream and its revision, without a round trip.
func (c *Client) Call(ctx context.Context, method string, params any) (any, error) {
	if n := server.Client(ctx); n != 0 && server.CanAsk(ctx) {
		// From here, connecting included: a roots/list the upstream asks
		// before it has the call is this session's (rootsout.go).
		defer c.rootsClients.calling(n, ctx)()
	}
	_, d, err := c.ensure(ctx)
	if err != nil {
		return nil, err
	}
	if !d.Has(method) {
		// The dialect says why (the revision it speaks); the gateway
		// passes this on as the upstream's refusal.
		why := "its protocol revision has no " + method
		var je *jsonrpc.Error
		if _, err := d.Request(method, params, nil, ""); errors.As(err, &je) {
			why = je.Message
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.MethodNotFound, Message: fmt.Sprintf("upstream %q: %s", c.spec.Name, why)}
	}
	if n := server.Client(ctx); n != 0 && d.Has(mcp.MethodNotificationsRootsListChanged) {
		c.rootsClients.used(n) // roots.go
	}
	return c.call(ctx, method, params)
}

// Capabilities are what the upstream declared.
func (c *Client) Capabilities(ctx context.Context) (mcp.ServerCapabilities, error) {
	_, d, err := c.ensure(ctx)
	if err != nil {
		return mcp.ServerCapabilities{}, err
	}
	return d.Capabilities, nil
}

// redact takes what may be secret out of the URL an HTTP error names:
// userinfo, query and fragment (API keys ride there). Headers and
// environment values never appear in errors.
func redact(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	safe := "(the configured url)"
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
		safe = u.String()
	}
	// The wrappers' texts were made with the URL in them already.
	msg := strings.ReplaceAll(err.Error(), ue.URL, safe)
	ue.URL = safe
	return &redacted{msg, err}
}

// redacted is an error with its text redacted; Is and As see the original.
type redacted struct {
	msg string
	err error
}

func (r *redacted) Error() string { return r.msg }
func (r *redacted) Unwrap() error { return r.err }

// logLimit is a token bucket over the lines an upstream makes mcpx log
// (Spec.LogRate): an upstream's flood must not become mcpx's.
type logLimit struct {
	out         *slog.Logger // the count of dropped lines goes here, unlimited
	rate, burst float64      // lines a second, and at once; rate 0: no limit
	every       time.Duration

	mu      sync.Mutex
	tokens  float64
	last    time.Time
	dropped int
	since   time.Time   // the first drop not yet reported
	timer   *time.Timer // reports the drops, armed by the first
	closed  bool
}

func (l *logLimit) allow() bool {
	if l.rate <= 0 {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if l.last.IsZero() {
		l.tokens = l.burst
	} else {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	}
	l.last = now
	if l.tokens >= 1 || l.closed {
		l.tokens--
		return true
	}
	if l.dropped == 0 {
		l.since = now
		l.timer = time.AfterFunc(l.every, l.report)
	}
	l.dropped++
	return false
}

// report logs how many lines were dropped since the last report, if any.
func (l *logLimit) report() {
	l.mu.Lock()
	n, since := l.dropped, l.since
	l.dropped = 0
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.mu.Unlock()
	if n > 0 {
		l.out.Warn("upstream log lines dropped: over the rate limit", "dropped", n, "over", time.Since(since).Round(time.Millisecond),
			"limit", fmt.Sprintf("%g lines/s after a burst of %g", l.rate, l.burst))
	}
}

// close reports what is left; lines after it are not limited, so that no
// timer outlives the client.
func (l *logLimit) close() {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.report()
}

// limitedHandler passes a record on only when its logLimit allows.
type limitedHandler struct {
	slog.Handler
	l *logLimit
}

func (h limitedHandler) Handle(ctx context.Context, r slog.Record) error {
	if !h.l.allow() {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h limitedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return limitedHandler{h.Handler.WithAttrs(as), h.l}
}

func (h limitedHandler) WithGroup(name string) slog.Handler {
	return limitedHandler{h.Handler.WithGroup(name), h.l}
}
