package host_test

// A legacy session's resource subscriptions across replicas (issue 19):
// the replica that took a subscription follows the resource for the
// session's life, wherever the session's other requests land, and a
// resources/unsubscribe on any replica releases it there.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	hub "github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/cluster"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
	"github.com/mcpx-dev/mcpx/runtime/transport/streamhttp"
	"github.com/mcpx-dev/mcpx/runtime/upstream"
)

// subReplica is a replica whose upstream reports its subscriptions.
type subReplica struct {
	url    string
	up     *sdk.Server
	subs   chan string            // URIs the upstream was asked to follow
	unsubs chan string            // and to let go
	bus    *cutBus                // its bus, which a test can cut
	gate   atomic.Pointer[func()] // run by the upstream before it follows a URI
	stop   func()                 // stops it: its endpoint, gateway and bus
}

// cutBus is a replica's bus that a test cuts: while cut, what it
// publishes is lost (ErrUnavailable), as with its Redis connection down.
type cutBus struct {
	cluster.Bus
	cut atomic.Bool
}

func (b *cutBus) Publish(ctx context.Context, topic string, data []byte) error {
	if b.cut.Load() {
		return fmt.Errorf("%w: cut by the test", cluster.ErrUnavailable)
	}
	return b.Bus.Publish(ctx, topic, data)
}

// startSubReplicas serves n replicas on join's cluster whose legacy
// sessions go idle after idle.
func startSubReplicas(t *testing.T, n int, join func() *cluster.Cluster, idle time.Duration) []*subReplica {
	t.Helper()
	states := requeststate.Random()
	var rs []*subReplica
	for range n {
		c := join()
		r := &subReplica{subs: make(chan string, 16), unsubs: make(chan string, 16), bus: &cutBus{Bus: c.Bus}}
		c.Bus = r.bus
		r.up = sdk.NewServer(&sdk.Implementation{Name: "sub-upstream", Version: "1"}, &sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"},
			SubscribeHandler: func(_ context.Context, req *sdk.SubscribeRequest) error {
				if g := r.gate.Load(); g != nil {
					(*g)()
				}
				r.subs <- req.Params.URI
				return nil
			},
			UnsubscribeHandler: func(_ context.Context, req *sdk.UnsubscribeRequest) error {
				r.unsubs <- req.Params.URI
				return nil
			}})
		r.up.AddResource(&sdk.Resource{Name: "doc", URI: "test://doc", MIMEType: "text/plain"}, func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "v1"}}}, nil
		})
		srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return r.up }, nil))
		log := slog.New(slog.DiscardHandler)
		info := hub.Implementation{Name: "mcpx", Version: "test"}
		g := gateway.New(log)
		g.States, g.Replica = states, c.Bus.ID()
		prefix := ""
		if err := g.Add(upstream.New(upstream.Spec{Name: "up", URL: srv.URL}, info, log), gateway.Options{Prefix: &prefix}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		urls := make(chan string, 1)
		done := make(chan error, 1)
		go func() {
			done <- host.HTTP(ctx, host.Config{NS: g, Info: info, Log: log, Cluster: c, HTTP: streamhttp.Options{SessionIdle: idle}}, "127.0.0.1:0", func(u string) { urls <- u })
		}()
		var once sync.Once
		r.stop = func() {
			once.Do(func() {
				cancel()
				<-done
				g.Close()
				c.Close()
				srv.CloseClientConnections()
				go srv.Close()
			})
		}
		t.Cleanup(r.stop)
		select {
		case r.url = <-urls:
		case err := <-done:
			t.Fatal(err)
		case <-time.After(10 * time.Second):
			t.Fatal("not serving")
		}
		rs = append(rs, r)
	}
	return rs
}

// subURI is the upstream's resource, gwURI what mcpx calls it.
const subURI, gwURI = "test://doc", "mcpx://up/test://doc"

// subscribeOn subscribes session sid to subURI on r and waits for r's
// upstream to follow it.
func subscribeOn(t *testing.T, r *subReplica, sid string) {
	t.Helper()
	subscribeOnly(t, r, sid)
	select {
	case <-r.subs:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream of the replica that took the subscription was not asked to follow the resource")
	}
}

// subscribeOnly subscribes session sid to subURI on r, once r knows it.
func subscribeOnly(t *testing.T, r *subReplica, sid string) {
	t.Helper()
	// The replica knows the resource once it has read its upstream's list.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		_, _, msg := rpc(t, r.url, "", sessionHeaders(sid), `{"jsonrpc":"2.0","id":2,"method":"resources/list"}`)
		res, _ := msg["result"].(map[string]any)
		if list, _ := res["resources"].([]any); len(list) == 1 {
			if u, _ := list[0].(map[string]any)["uri"].(string); u != gwURI {
				t.Fatalf("the resource's uri is %s", u)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("resources/list: %v", msg)
		}
	}
	st, _, msg := rpc(t, r.url, "", sessionHeaders(sid), fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":%q}}`, gwURI))
	if st != http.StatusOK || msg["error"] != nil {
		t.Fatalf("resources/subscribe: %d %v", st, msg)
	}
}

// ping sends the session a ping on r.
func ping(t *testing.T, r *subReplica, sid string) {
	t.Helper()
	if st, _, msg := rpc(t, r.url, "", sessionHeaders(sid), `{"jsonrpc":"2.0","id":7,"method":"ping"}`); st != http.StatusOK || msg["error"] != nil {
		t.Fatalf("ping: %d %v", st, msg)
	}
}

// noUnsubscribe fails if r's upstream let go of the resource.
func noUnsubscribe(t *testing.T, r *subReplica, when string) {
	t.Helper()
	select {
	case u := <-r.unsubs:
		t.Fatalf("%s: the upstream was told to let go of %s", when, u)
	default:
	}
}

// TestUnsubscribeOnAnotherReplica: a session subscribes on B; its
// resources/unsubscribe lands on C (and on A, which holds the GET
// stream): B lets go of the resource upstream, and B's later updates no
// longer reach the stream.
func TestUnsubscribeOnAnotherReplica(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		rs := startSubReplicas(t, 3, join, time.Minute)
		a, b, c := rs[0], rs[1], rs[2]
		sid := legacySession(t, a.url, "")
		stream, _ := sse(t, a.url, sid, "")
		subscribeOn(t, b, sid)
		// The update reaches A's stream first (the stream's bus
		// subscription may still be on its way: sent until heard).
		heard := false
		for deadline := time.Now().Add(10 * time.Second); !heard && time.Now().Before(deadline); {
			b.up.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: subURI})
			select {
			case d := <-stream:
				heard = strings.Contains(d, "notifications/resources/updated")
			case <-time.After(100 * time.Millisecond):
			}
		}
		if !heard {
			t.Fatal("A's stream did not hear the update of the resource subscribed on B")
		}
		st, _, msg := rpc(t, c.url, "", sessionHeaders(sid), fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"resources/unsubscribe","params":{"uri":%q}}`, gwURI))
		if st != http.StatusOK || msg["error"] != nil {
			t.Fatalf("resources/unsubscribe on C: %d %v", st, msg)
		}
		select {
		case u := <-b.unsubs:
			if u != subURI {
				t.Fatalf("B let go of %s", u)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("resources/unsubscribe on C: B still follows the resource upstream")
		}
		// Nothing more reaches the stream (a list change may: the
		// upstreams' first loads). The updates sent before are let
		// through first.
		for drained := false; !drained; {
			select {
			case <-stream:
			case <-time.After(300 * time.Millisecond):
				drained = true
			}
		}
		for range 5 {
			b.up.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: subURI})
		}
		quiet := time.After(500 * time.Millisecond)
		for {
			select {
			case d := <-stream:
				if strings.Contains(d, "notifications/resources/updated") {
					t.Fatalf("an update after the unsubscribe reached the stream: %s", d)
				}
				continue
			case <-quiet:
			}
			break
		}
		noUnsubscribe(t, a, "A")
		noUnsubscribe(t, c, "C")
	})
}

// TestSubscriptionOutlivesIdleCopy: a session subscribes on B, then its
// requests go to A only for longer than the idle timeout (the session
// lives on), then one lands on B again: B's copy of the session did not
// end with its own idleness, so B still follows the resource, and its
// update reaches the GET stream on A.
func TestSubscriptionOutlivesIdleCopy(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		const idle = time.Second
		rs := startSubReplicas(t, 2, join, idle)
		a, b := rs[0], rs[1]
		sid := legacySession(t, a.url, "")
		stream, _ := sse(t, a.url, sid, "")
		subscribeOn(t, b, sid)
		for end := time.Now().Add(idle * 5 / 2); time.Now().Before(end); time.Sleep(150 * time.Millisecond) {
			ping(t, a, sid)
		}
		ping(t, b, sid) // B's copy, idle for 2.5 s, is looked at again
		noUnsubscribe(t, b, "the session's copy on B idle while the session lived")
		for deadline := time.Now().Add(10 * time.Second); ; {
			b.up.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: subURI})
			select {
			case d := <-stream:
				if strings.Contains(d, "notifications/resources/updated") {
					return
				}
			case <-time.After(100 * time.Millisecond):
			}
			ping(t, a, sid)
			if time.Now().After(deadline) {
				t.Fatal("after B's copy went idle, B's update no longer reached the stream on A")
			}
		}
	})
}

// TestSubscriptionEndsWithTheSession: the copy B keeps for its
// subscription does not outlive the session: once the session's record
// expires (no request, no stream), B lets go of the resource upstream,
// though no request comes to B; and a DELETE on A does the same at once.
func TestSubscriptionEndsWithTheSession(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		const idle = time.Second
		rs := startSubReplicas(t, 2, join, idle)
		a, b := rs[0], rs[1]
		// miniredis expires keys only when told to (FastForward).
		if !strings.HasSuffix(t.Name(), "/miniredis") {
			expiring := legacySession(t, a.url, "")
			subscribeOn(t, b, expiring)
			select {
			case <-b.unsubs:
			case <-time.After(idle + 10*time.Second):
				t.Fatal("the session's record expired: B still follows its resource")
			}
		}

		deleted := legacySession(t, a.url, "")
		subscribeOn(t, b, deleted)
		if st, _, msg := del(t, a.url, deleted, ""); st != http.StatusNoContent {
			t.Fatalf("DELETE on A: %d %v", st, msg)
		}
		select {
		case <-b.unsubs:
		case <-time.After(10 * time.Second):
			t.Fatal("the session was deleted on A: B still follows its resource")
		}
	})
}

// hearUpdate sends r's update of subURI until stream hears it (the
// stream's bus subscription, or a takeover, may still be on its way).
func hearUpdate(t *testing.T, r *subReplica, stream <-chan string, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		r.up.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: subURI})
		select {
		case d := <-stream:
			if strings.Contains(d, "notifications/resources/updated") {
				return
			}
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("%s: the stream did not hear the update", what)
}

// TestSubscriptionTakenOverFromStoppedReplica (gap 1): a session
// subscribes on B while its GET stream is held on A; B stops. The
// session lives on, and its record still names B for the URI: A, checking
// the record for its stream, finds B gone, follows the resource upstream
// itself and records so, and the next update reaches the stream.
func TestSubscriptionTakenOverFromStoppedReplica(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		rs := startSubReplicas(t, 3, join, 3*time.Second)
		a, b, c := rs[0], rs[1], rs[2]
		sid := legacySession(t, a.url, "")
		stream, _ := sse(t, a.url, sid, "")
		subscribeOn(t, b, sid)
		hearUpdate(t, b, stream, "subscribed on B")
		b.stop()
		var taker *subReplica
		select {
		case u := <-a.subs:
			if u != subURI {
				t.Fatalf("A followed %s", u)
			}
			taker = a
		case <-c.subs:
			taker = c
		case <-time.After(10 * time.Second):
			t.Fatal("B stopped: no replica took its subscription over")
		}
		for drained := false; !drained; { // what B sent before it stopped
			select {
			case <-stream:
			case <-time.After(300 * time.Millisecond):
				drained = true
			}
		}
		hearUpdate(t, taker, stream, "after B stopped")
		ping(t, c, sid) // C serves the session on: it does not follow the resource again
		select {
		case <-a.subs:
			t.Fatal("the subscription was taken over twice")
		case <-c.subs:
			t.Fatal("the subscription was taken over twice")
		default:
		}
	})
}

// TestUnsubscribeWhileBusIsCut (gap 2): a session subscribes on B; its
// resources/unsubscribe is answered on A while A's bus is cut (what A
// publishes is lost). B, checking the session's record, finds the URI
// gone and lets go of it upstream within a period, though the session
// lives on (its GET stream held on A keeps its record).
func TestUnsubscribeWhileBusIsCut(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		rs := startSubReplicas(t, 2, join, 3*time.Second)
		a, b := rs[0], rs[1]
		sid := legacySession(t, a.url, "")
		sse(t, a.url, sid, "")
		subscribeOn(t, b, sid)
		a.bus.cut.Store(true)
		st, _, msg := rpc(t, a.url, "", sessionHeaders(sid), fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"resources/unsubscribe","params":{"uri":%q}}`, gwURI))
		if st != http.StatusOK || msg["error"] != nil {
			t.Fatalf("resources/unsubscribe on A: %d %v", st, msg)
		}
		select {
		case u := <-b.unsubs:
			if u != subURI {
				t.Fatalf("B let go of %s", u)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("an unsubscribe answered while the bus was cut: B still follows the resource upstream")
		}
		a.bus.cut.Store(false)
		ping(t, a, sid) // the session lives on
	})
}

// TestOneURISubscribedOnTwoReplicas (gap 3): a session subscribes to a
// URI on A, then to the same URI on B, its GET stream held on C. B sees A
// follows it and does not follow it again; one change of the resource
// (told by both replicas' upstreams) reaches the stream once.
func TestOneURISubscribedOnTwoReplicas(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		rs := startSubReplicas(t, 3, join, time.Minute)
		a, b, c := rs[0], rs[1], rs[2]
		sid := legacySession(t, c.url, "")
		stream, _ := sse(t, c.url, sid, "")
		subscribeOn(t, a, sid)
		hearUpdate(t, a, stream, "subscribed on A")
		subscribeOnly(t, b, sid)
		select {
		case <-b.subs:
			t.Fatal("B followed upstream a URI A follows for the session")
		default:
		}
		for drained := false; !drained; {
			select {
			case <-stream:
			case <-time.After(300 * time.Millisecond):
				drained = true
			}
		}
		a.up.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: subURI})
		b.up.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: subURI})
		heard := 0
		for quiet := time.After(time.Second); ; {
			select {
			case d := <-stream:
				if strings.Contains(d, "notifications/resources/updated") {
					heard++
				}
				continue
			case <-quiet:
			}
			break
		}
		if heard != 1 {
			t.Fatalf("one change of the resource reached the stream %d times", heard)
		}
		// One unsubscribe ends it.
		st, _, msg := rpc(t, b.url, "", sessionHeaders(sid), fmt.Sprintf(`{"jsonrpc":"2.0","id":4,"method":"resources/unsubscribe","params":{"uri":%q}}`, gwURI))
		if st != http.StatusOK || msg["error"] != nil {
			t.Fatalf("resources/unsubscribe on B: %d %v", st, msg)
		}
		select {
		case <-a.unsubs:
		case <-time.After(10 * time.Second):
			t.Fatal("resources/unsubscribe on B: A still follows the resource")
		}
	})
}

// TestSubscriptionTakenOverAtNextRequest (gap 1, no stream): a session
// subscribes on B and holds no GET stream; B stops. The replica serving
// the session's next request (A) finds B gone in the record it checks
// after the request, and follows the resource itself.
func TestSubscriptionTakenOverAtNextRequest(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		rs := startSubReplicas(t, 2, join, 3*time.Second)
		a, b := rs[0], rs[1]
		sid := legacySession(t, a.url, "")
		subscribeOn(t, b, sid)
		b.stop()
		for deadline := time.Now().Add(10 * time.Second); ; {
			ping(t, a, sid)
			select {
			case u := <-a.subs:
				if u != subURI {
					t.Fatalf("A followed %s", u)
				}
				return
			case <-time.After(200 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatal("B stopped: the session's requests on A did not take its subscription over")
			}
		}
	})
}

// TestSetLevelKeepsSubscription: a log level set on A after the session
// subscribed on B is swapped into the session's record without writing
// over its subscriptions: B, checking the record, still finds the URI
// given to it, and follows it on.
func TestSetLevelKeepsSubscription(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		const idle = 3 * time.Second
		rs := startSubReplicas(t, 2, join, idle)
		a, b := rs[0], rs[1]
		sid := legacySession(t, a.url, "")
		stream, _ := sse(t, a.url, sid, "")
		subscribeOn(t, b, sid)
		if st, _, msg := rpc(t, a.url, "", sessionHeaders(sid), `{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"warning"}}`); st != http.StatusOK || msg["error"] != nil {
			t.Fatalf("logging/setLevel on A: %d %v", st, msg)
		}
		select { // B checks its record every third of the idle time
		case u := <-b.unsubs:
			t.Fatalf("a log level set on A: B let go of %s", u)
		case <-time.After(idle):
		}
		hearUpdate(t, b, stream, "after the log level was set on A")
	})
}

// TestSubscribesAtOnceOnTwoReplicas: a session subscribes to one URI on
// A and on B at once: both upstreams are asked to follow it before either
// replica answers (a gate holds each until both are asked). The record's
// compare-and-set leaves one replica following it; the other lets go
// (its swap finds the other recorded, or its check after the request
// does).
func TestSubscribesAtOnceOnTwoReplicas(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		rs := startSubReplicas(t, 2, join, time.Minute)
		a, b := rs[0], rs[1]
		sid := legacySession(t, a.url, "")
		var asked sync.WaitGroup
		asked.Add(2)
		both := make(chan struct{})
		go func() { asked.Wait(); close(both) }()
		gate := func() {
			asked.Done()
			select {
			case <-both:
			case <-time.After(10 * time.Second): // the test fails below
			}
		}
		a.gate.Store(&gate)
		b.gate.Store(&gate)
		var wg sync.WaitGroup
		for _, r := range rs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				subscribeOnly(t, r, sid)
			}()
		}
		wg.Wait()
		select {
		case <-both:
		default:
			t.Fatal("the two subscribes did not both reach their upstreams")
		}
		follows := map[*subReplica]int{}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			for _, r := range rs {
				for drained := false; !drained; {
					select {
					case <-r.subs:
						follows[r]++
					case <-r.unsubs:
						follows[r]--
					default:
						drained = true
					}
				}
			}
			if follows[a]+follows[b] == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("subscribed at once on A and B: A follows %d, B %d", follows[a], follows[b])
			}
		}
		if follows[a] < 0 || follows[b] < 0 {
			t.Fatalf("A follows %d, B %d", follows[a], follows[b])
		}
	})
}

// TestBatchSubscriptionsRecorded: a 2025-03-26 session's
// resources/subscribe and resources/unsubscribe sent in batches are the
// session record's as a single POST's are. B, which took the batched
// subscribe, keeps following the resource across its record checks (the
// record gives it the URI); after a batched unsubscribe on B, its checks
// do not follow it again (the record no longer gives it).
func TestBatchSubscriptionsRecorded(t *testing.T) {
	eachBackend(t, func(t *testing.T, join func() *cluster.Cluster) {
		const idle = 1500 * time.Millisecond // checks every 500 ms
		rs := startSubReplicas(t, 2, join, idle)
		a, b := rs[0], rs[1]
		const rev = "2025-03-26"
		sid := legacySessionAt(t, a.url, "", rev)
		hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": rev}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			_, _, msg := rpc(t, b.url, "", hdr, `{"jsonrpc":"2.0","id":2,"method":"resources/list"}`)
			if res, _ := msg["result"].(map[string]any); res != nil {
				if list, _ := res["resources"].([]any); len(list) == 1 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("resources/list on B: %v", msg)
			}
		}
		batch := func(method string) {
			t.Helper()
			body := fmt.Sprintf(`[{"jsonrpc":"2.0","id":3,"method":%q,"params":{"uri":%q}},{"jsonrpc":"2.0","id":4,"method":"ping"}]`, method, gwURI)
			req, _ := http.NewRequest(http.MethodPost, b.url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || strings.Contains(string(got), `"error"`) {
				t.Fatalf("a batched %s: %d %s", method, resp.StatusCode, got)
			}
		}
		batch("resources/subscribe")
		select {
		case <-b.subs:
		case <-time.After(10 * time.Second):
			t.Fatal("a batched resources/subscribe: B's upstream was not asked to follow the resource")
		}
		// quiet reads ch for d while the session's requests (on A) keep
		// its record alive, and says whether ch was quiet.
		quiet := func(ch <-chan string, d time.Duration) bool {
			t.Helper()
			for end := time.Now().Add(d); time.Now().Before(end); {
				select {
				case <-ch:
					return false
				case <-time.After(250 * time.Millisecond):
				}
				if st, _, msg := rpc(t, a.url, "", hdr, `{"jsonrpc":"2.0","id":7,"method":"ping"}`); st != http.StatusOK || msg["error"] != nil {
					t.Fatalf("ping: %d %v", st, msg)
				}
			}
			return true
		}
		if !quiet(b.unsubs, idle) {
			t.Fatal("B let go of the resource at a record check: the batched subscribe was not recorded")
		}
		batch("resources/unsubscribe")
		select {
		case <-b.unsubs:
		case <-time.After(10 * time.Second):
			t.Fatal("a batched resources/unsubscribe: B still follows the resource")
		}
		if !quiet(b.subs, idle) {
			t.Fatal("B followed the resource again at a record check: the batched unsubscribe was not recorded")
		}
	})
}
