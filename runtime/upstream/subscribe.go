package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/edge"
	"github.com/mcpx-dev/mcpx/runtime/jsonrpc"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// Resource subscriptions, the way the upstream's era has them: a legacy
// upstream is sent resources/subscribe and resources/unsubscribe (its
// notifications/resources/updated come on stdio or the session's GET
// stream); a 2026-07-28 upstream gets one subscriptions/listen per URI,
// whose resourceSubscriptions names it, held open while the URI is
// followed (a listen's filter is fixed, so one per URI lets each end on
// its own). The client keeps the URIs it follows and follows them again
// on every new connection: an upstream that restarted has forgotten them.
// The gateway counts the clients behind each URI; here each is followed
// once.

// resourceSubs is what a Client follows.
type resourceSubs struct {
	once    sync.Once
	updated chan string // see Client.Updated
	acks    sync.Map    // listen id -> chan *mcp.SubscriptionsAcknowledgedNotificationParams

	mu   sync.Mutex
	uris map[string]*following
}

// following is one followed URI. A 2026-07-28 upstream's listen for it
// is ended by end (nil for a legacy upstream); a listen the upstream
// ends while the connection lives is opened again (relisten).
type following struct {
	modern bool
	mu     sync.Mutex
	stop   func() // the current listen's
	ended  bool   // unsubscribed
}

// end stops following: the current listen, and any opened later.
func (f *following) end() {
	f.mu.Lock()
	stop := f.stop
	f.ended = true
	f.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// set makes stop the current listen's, unless f has ended (it reports
// false, and stop is called).
func (f *following) set(stop func()) bool {
	f.mu.Lock()
	ended := f.ended
	if !ended {
		f.stop = stop
	}
	f.mu.Unlock()
	if ended {
		stop()
	}
	return !ended
}

// relistenBackoff bounds the wait before a lost listen is opened again.
const (
	relistenMin = time.Second
	relistenMax = 30 * time.Second
)

// updatedQueue bounds the updates waiting for the gateway; beyond it an
// update is dropped and logged (the reader never waits on a client).
const updatedQueue = 1024

func (r *resourceSubs) ch() chan string {
	r.once.Do(func() { r.updated = make(chan string, updatedQueue) })
	return r.updated
}

// Updated delivers the upstream URIs its notifications/resources/updated
// name. It is never closed.
func (c *Client) Updated() <-chan string { return c.res.ch() }

// subscribes reports whether the upstream declared resources.subscribe.
func subscribes(d *edge.Dialect) bool {
	r := d.Capabilities.Resources
	return r != nil && r.Subscribe != nil && *r.Subscribe
}

// ErrNoSubscriptions is the answer for an upstream that does not offer
// resource subscriptions.
var ErrNoSubscriptions = errors.New("the upstream does not offer resource subscriptions (it declared no resources.subscribe)")

// Subscribe follows uri (the upstream's own) until Unsubscribe: a legacy
// upstream is sent resources/subscribe, a 2026-07-28 one a listen naming
// it, whose acknowledgement must agree to it. Following a URI already
// followed is nothing more.
func (c *Client) Subscribe(ctx context.Context, uri string) error {
	cn, d, err := c.ensure(ctx)
	if err != nil {
		return err
	}
	if !subscribes(d) {
		return fmt.Errorf("upstream %q: %w", c.spec.Name, ErrNoSubscriptions)
	}
	c.res.mu.Lock()
	_, had := c.res.uris[uri]
	c.res.mu.Unlock()
	if had {
		return nil
	}
	f, err := c.follow(ctx, cn, d, uri)
	if err != nil {
		return err
	}
	c.res.mu.Lock()
	if c.res.uris == nil {
		c.res.uris = map[string]*following{}
	}
	c.res.uris[uri] = f
	c.res.mu.Unlock()
	return nil
}

// Unsubscribe stops following uri: a legacy upstream is sent
// resources/unsubscribe (if it is connected: one that is not has
// forgotten), a 2026-07-28 one's listen for it ends.
func (c *Client) Unsubscribe(ctx context.Context, uri string) error {
	c.res.mu.Lock()
	f, had := c.res.uris[uri]
	delete(c.res.uris, uri)
	c.res.mu.Unlock()
	if !had {
		return nil
	}
	if f.modern {
		f.end()
		return nil
	}
	c.mu.Lock()
	connected := c.c != nil && c.d != nil
	c.mu.Unlock()
	if !connected {
		return nil
	}
	_, err := c.call(ctx, mcp.MethodResourcesUnsubscribe, &mcp.UnsubscribeRequestParams{URI: uri})
	return err
}

// follow starts following uri on cn.
func (c *Client) follow(ctx context.Context, cn conn, d *edge.Dialect, uri string) (*following, error) {
	switch {
	case d.Has(mcp.MethodResourcesSubscribe):
		if _, err := c.call(ctx, mcp.MethodResourcesSubscribe, &mcp.SubscribeRequestParams{URI: uri}); err != nil {
			return nil, err
		}
		return &following{}, nil
	case d.Has(mcp.MethodSubscriptionsListen):
		f := &following{modern: true}
		stop, err := c.listenFor(ctx, cn, d, uri, func() { c.relisten(f, uri, cn, d) })
		if err != nil {
			return nil, err
		}
		f.set(stop)
		return f, nil
	}
	return nil, fmt.Errorf("upstream %q: its protocol revision has neither resources/subscribe nor subscriptions/listen", c.spec.Name)
}

// listenFor opens a subscriptions/listen on cn naming uri alone, and
// waits for its acknowledgement (within the call timeout, or ctx). The
// listen lasts until stop, the connection's end or Close; lost is called
// (in a goroutine of its own) when the upstream ends an acknowledged
// listen before any of them.
func (c *Client) listenFor(ctx context.Context, cn conn, d *edge.Dialect, uri string, lost func()) (stop func(), err error) {
	raw, err := d.Request(mcp.MethodSubscriptionsListen, &mcp.SubscriptionsListenRequestParams{Notifications: mcp.SubscriptionFilter{ResourceSubscriptions: []string{uri}}}, nil, "")
	if err != nil {
		return nil, err
	}
	id := json.RawMessage(strconv.FormatInt(c.nextTok.Add(1), 10))
	acked := make(chan *mcp.SubscriptionsAcknowledgedNotificationParams, 1)
	c.res.acks.Store(string(id), acked)
	defer c.res.acks.Delete(string(id))

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, fmt.Errorf("upstream %q is closed", c.spec.Name)
	}
	c.watchers.Add(1) // under mu, so never after Close began waiting
	c.mu.Unlock()
	lctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	var ackedOK atomic.Bool // the caller was told the listen is open
	go func() {
		defer c.watchers.Done()
		defer cancel()
		go func() {
			select {
			case <-cn.dead():
			case <-c.stop:
			case <-lctx.Done():
			}
			cancel()
		}()
		resp, err := cn.roundTrip(lctx, jsonrpc.Request(id, mcp.MethodSubscriptionsListen, raw), "")
		if err == nil && resp.Error != nil {
			err = resp.Error
		}
		if err == nil {
			err = errors.New("the upstream ended the listen")
		}
		ended <- err
		if lctx.Err() == nil && ackedOK.Load() && lost != nil {
			c.log.Warn("the upstream ended a resource's subscriptions/listen; mcpx opens it again", "uri", uri, "err", redact(err))
			c.watchers.Add(1) // this goroutine is counted until then
			go func() { defer c.watchers.Done(); lost() }()
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if cn.cancelsByNotification() { // stdio: the listen ends by notifications/cancelled
				cn.send(d.Cancel(id, "mcpx no longer follows this resource"))
			}
		})
	}
	wait := time.NewTimer(c.spec.Timeout)
	defer wait.Stop()
	select {
	case ack := <-acked:
		if !slices.Contains(ack.Notifications.ResourceSubscriptions, uri) {
			stop()
			// The upstream would not follow this URI (one it does not
			// have, most likely): the client's URI is the reason.
			return nil, server.InvalidParams("cannot subscribe to %s: upstream %q did not agree to follow it (its subscriptions/listen acknowledgement leaves it out)", uri, c.spec.Name)
		}
		ackedOK.Store(true)
		return stop, nil
	case err := <-ended:
		stop()
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return nil, je
		}
		return nil, fmt.Errorf("upstream %q: subscriptions/listen for %s: %w", c.spec.Name, uri, redact(err))
	case <-wait.C:
		stop()
		return nil, &timeoutError{upstream: c.spec.Name, method: mcp.MethodSubscriptionsListen + " (its acknowledgement)", after: c.spec.Timeout}
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
}

// relisten opens uri's listen on cn again after the upstream ended it,
// with backoff, for as long as f is followed and cn is the client's
// connection. A connection that died is not its business: the next
// one's refollow listens anew (two listens for one URI on one connection
// would not do: a server may keep one per session and URI, and the end
// of either would end both).
func (c *Client) relisten(f *following, uri string, cn conn, d *edge.Dialect) {
	wait := relistenMin
	for {
		select {
		case <-c.stop:
			return
		case <-time.After(wait):
		}
		f.mu.Lock()
		ended := f.ended
		f.mu.Unlock()
		c.res.mu.Lock()
		current := c.res.uris[uri] == f
		c.res.mu.Unlock()
		c.mu.Lock()
		live := c.c == cn && !c.closed
		c.mu.Unlock()
		if ended || !current || !live {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.spec.Timeout)
		stop, err := c.listenFor(ctx, cn, d, uri, func() { c.relisten(f, uri, cn, d) })
		cancel()
		if err == nil {
			f.set(stop)
			c.log.Info("a resource's subscriptions/listen is open again", "uri", uri)
			return
		}
		c.log.Warn("opening a resource's subscriptions/listen again failed; mcpx retries", "uri", uri, "err", redact(err), "in", min(2*wait, relistenMax))
		wait = min(2*wait, relistenMax)
	}
}

// refollow follows again, on a new connection, every URI followed before
// it: the upstream that restarted knows none of them.
func (c *Client) refollow(cn conn, d *edge.Dialect) {
	defer c.watchers.Done()
	c.res.mu.Lock()
	uris := make([]string, 0, len(c.res.uris))
	for u := range c.res.uris {
		uris = append(uris, u)
	}
	c.res.mu.Unlock()
	if len(uris) == 0 {
		return
	}
	slices.Sort(uris)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-cn.dead():
		case <-c.stop:
		case <-ctx.Done():
		}
		cancel()
	}()
	for _, u := range uris {
		if !subscribes(d) {
			c.log.Warn("the restarted upstream no longer offers resource subscriptions; a followed resource is not heard", "uri", u)
			continue
		}
		f, err := c.follow(ctx, cn, d, u)
		if err != nil {
			if ctx.Err() == nil {
				c.log.Warn("following a resource again after the upstream restarted failed; its updates will not be heard", "uri", u, "err", redact(err))
			}
			continue
		}
		c.res.mu.Lock()
		old, still := c.res.uris[u]
		if still {
			c.res.uris[u] = f
		}
		c.res.mu.Unlock()
		if old != nil && old.modern {
			old.end() // a relisten of the old connection's stops with it
		}
		if !still && f.modern { // unsubscribed meanwhile
			f.end()
		}
	}
	c.log.Info("resources followed again after the upstream restarted", "count", len(uris))
}

// handleSubscription takes the notifications of resource subscriptions
// from handle: an update, or a listen's acknowledgement. It reports
// whether m was one.
func (c *Client) handleSubscription(d *edge.Dialect, m *jsonrpc.Message) bool {
	switch m.Method {
	case mcp.MethodNotificationsResourcesUpdated:
		v, err := d.Notification(m.Method, m.Params)
		p, _ := v.(*mcp.ResourceUpdatedNotificationParams)
		if err != nil || p == nil || p.URI == "" {
			return true
		}
		select {
		case c.res.ch() <- p.URI:
		default:
			c.log.Warn("a resource update was dropped: too many waiting for the gateway", "uri", p.URI, "queue", updatedQueue)
		}
		return true
	case mcp.MethodNotificationsSubscriptionsAcknowledged:
		v, err := d.Notification(m.Method, m.Params)
		p, _ := v.(*mcp.SubscriptionsAcknowledgedNotificationParams)
		if err != nil || p == nil {
			return true
		}
		id := bytes.TrimSpace(p.Meta[mcp.MetaKeySubscriptionID])
		if ch, ok := c.res.acks.Load(string(id)); ok {
			select {
			case ch.(chan *mcp.SubscriptionsAcknowledgedNotificationParams) <- p:
			default:
			}
		}
		return true
	}
	return false
}
