package gateway

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/server"
)

// subFake is a fake that can follow resources: it counts what the
// gateway asks of it.
type subFake struct {
	*fake
	updated chan string

	smu         sync.Mutex
	active      map[string]int // subscribed minus unsubscribed, by URI
	most        int            // the most active at once for one URI
	subs, unsub int
	failNext    error
}

func newSubFake(name string, offers bool) *subFake {
	f := &subFake{fake: newFake(name), updated: make(chan string, 16), active: map[string]int{}}
	f.caps.Resources = &mcp.ServerCapabilitiesResources{Subscribe: mcp.Ptr(offers)}
	f.resources = []mcp.Resource{{URI: "x://1", Name: "one"}}
	return f
}

func (f *subFake) Subscribe(_ context.Context, uri string) error {
	time.Sleep(time.Millisecond) // a round trip, for other goroutines to come
	f.smu.Lock()
	defer f.smu.Unlock()
	if err := f.failNext; err != nil {
		f.failNext = nil
		return err
	}
	f.subs++
	f.active[uri]++
	f.most = max(f.most, f.active[uri])
	return nil
}

func (f *subFake) Unsubscribe(_ context.Context, uri string) error {
	f.smu.Lock()
	defer f.smu.Unlock()
	f.unsub++
	f.active[uri]--
	return nil
}

func (f *subFake) Updated() <-chan string { return f.updated }

// TestSubscribeOncePerUpstreamURI: 40 clients following one exposed URI
// at once, leaving and coming back, are one subscription upstream at a
// time, to the upstream's own URI; the last to leave unsubscribes it.
func TestSubscribeOncePerUpstreamURI(t *testing.T) {
	f := newSubFake("s", true)
	g, _ := gateway(t, f)
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if err := g.Subscribe(context.Background(), "mcpx://s/x://1"); err != nil {
					t.Error(err)
					return
				}
				g.Unsubscribe("mcpx://s/x://1")
			}
		}()
	}
	wg.Wait()
	f.smu.Lock()
	defer f.smu.Unlock()
	if f.most != 1 || f.active["x://1"] != 0 || f.subs != f.unsub || f.subs == 0 {
		t.Errorf("upstream: most %d at once, %d left, %d subscribes and %d unsubscribes; want 1, 0 and as many of each", f.most, f.active["x://1"], f.subs, f.unsub)
	}
	for uri := range f.active {
		if uri != "x://1" {
			t.Errorf("the upstream was asked to follow %q, want only its own x://1", uri)
		}
	}
}

// TestSubscribeLastLeaves: two clients follow; the first to leave leaves
// the upstream subscribed, the second unsubscribes it. A failed upstream
// subscribe counts no one: the next client tries again.
func TestSubscribeLastLeaves(t *testing.T) {
	f := newSubFake("s", true)
	g, _ := gateway(t, f)
	f.smu.Lock()
	f.failNext = errors.New("refused")
	f.smu.Unlock()
	if err := g.Subscribe(context.Background(), "mcpx://s/x://1"); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("Subscribe: %v, want the upstream's refusal", err)
	}
	state := func() (int, int) { f.smu.Lock(); defer f.smu.Unlock(); return f.subs, f.unsub }
	for range 2 {
		if err := g.Subscribe(context.Background(), "mcpx://s/x://1"); err != nil {
			t.Fatal(err)
		}
	}
	if s, u := state(); s != 1 || u != 0 {
		t.Fatalf("after two clients: %d subscribes, %d unsubscribes; want 1, 0", s, u)
	}
	g.Unsubscribe("mcpx://s/x://1")
	if s, u := state(); s != 1 || u != 0 {
		t.Fatalf("after the first left: %d subscribes, %d unsubscribes; want 1, 0", s, u)
	}
	g.Unsubscribe("mcpx://s/x://1")
	g.Unsubscribe("mcpx://s/x://1") // one more than there were: nothing
	if s, u := state(); s != 1 || u != 1 {
		t.Fatalf("after the last left: %d subscribes, %d unsubscribes; want 1, 1", s, u)
	}
}

// TestSubscribeRefusals: a URI of an upstream that does not offer
// subscriptions is invalid params naming it; one no upstream serves is
// not found.
func TestSubscribeRefusals(t *testing.T) {
	g, _ := gateway(t, newSubFake("yes", true), newSubFake("no", false))
	var invalid *server.InvalidParamsError
	if err := g.Subscribe(context.Background(), "mcpx://no/x://1"); !errors.As(err, &invalid) || !strings.Contains(err.Error(), `upstream "no" does not offer resource subscriptions`) {
		t.Errorf("Subscribe to no's resource: %v, want invalid params naming it", err)
	}
	var notFound *server.ResourceNotFoundError
	for _, uri := range []string{"mcpx://nowhere/x://1", "x://1", "mcpx://yes"} {
		if err := g.Subscribe(context.Background(), uri); !errors.As(err, &notFound) {
			t.Errorf("Subscribe to %s: %v, want not found", uri, err)
		}
	}
}

// TestSubscribeDeclared: resources.subscribe is declared when an upstream
// that can follow its resources offers it, and only then.
func TestSubscribeDeclared(t *testing.T) {
	declared := func(ups ...any) bool {
		g, _ := gateway(t, ups...)
		c := g.Capabilities()
		return c.Resources != nil && c.Resources.Subscribe != nil && *c.Resources.Subscribe
	}
	plain := newFake("plain")
	plain.caps.Resources = &mcp.ServerCapabilitiesResources{Subscribe: mcp.Ptr(true)} // offers, but cannot follow
	if declared(newSubFake("no", false), plain) {
		t.Error("declared with no upstream that can follow its resources offering it")
	}
	if !declared(newSubFake("no", false), newSubFake("yes", true)) {
		t.Error("not declared with an upstream offering it")
	}
}

// TestUpdatesMappedToEveryReader: an upstream's update comes out under
// the URI clients know, mcpx://<namespace>/<uri> (unchanged for the root),
// to every reader of Updates.
func TestUpdatesMappedToEveryReader(t *testing.T) {
	s, root := newSubFake("s", true), newSubFake("r", true)
	g, _ := gateway(t, s, root, Options{Root: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := g.Updates(ctx), g.Updates(ctx)
	s.updated <- "x://1"
	root.updated <- "x://2"
	for _, r := range []<-chan string{a, b} {
		got := map[string]bool{}
		for range 2 {
			select {
			case u := <-r:
				got[u] = true
			case <-time.After(5 * time.Second):
				t.Fatalf("updates so far %v; want mcpx://s/x://1 and x://2", got)
			}
		}
		if !got["mcpx://s/x://1"] || !got["x://2"] {
			t.Errorf("updates %v; want mcpx://s/x://1 and x://2", got)
		}
	}
}
