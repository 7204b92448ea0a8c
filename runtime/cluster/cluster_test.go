package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/mcpx-dev/mcpx/runtime/internal/redistest"
)

// join makes n buses on one backend.
type join func(t *testing.T, ids ...string) []Bus

func memoryBuses(t *testing.T, ids ...string) []Bus {
	h := NewHub()
	var out []Bus
	for _, id := range ids {
		b := h.Join(id, 2*time.Second)
		t.Cleanup(func() { b.Close() })
		out = append(out, b)
	}
	return out
}

func redisBuses(addr string) join {
	return func(t *testing.T, ids ...string) []Bus {
		var out []Bus
		for _, id := range ids {
			rdb := redis.NewClient(&redis.Options{Addr: addr})
			b := NewRedis(rdb, id, Options{Timeout: 2 * time.Second})
			t.Cleanup(func() { b.Close(); rdb.Close() })
			out = append(out, b)
		}
		return out
	}
}

func TestBusMemory(t *testing.T) { runBus(t, memoryBuses) }

func TestBusMiniredis(t *testing.T) {
	m := miniredis.RunT(t)
	runBus(t, redisBuses(m.Addr()))
}

func TestBusRedisServer(t *testing.T) { runBus(t, redisBuses(redistest.Server(t))) }

// recv waits for an event.
func recv(t *testing.T, ch <-chan Event) Event {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	return Event{}
}

func runBus(t *testing.T, newBuses join) {
	t.Run("publish reaches every subscriber, sender named", func(t *testing.T) {
		bs := newBuses(t, "a", "b", "c")
		var chs []<-chan Event
		for _, b := range bs {
			ch, cancel := b.Subscribe("changes")
			t.Cleanup(cancel)
			chs = append(chs, ch)
		}
		// A subscription on Redis takes effect asynchronously: publish
		// until every replica has heard one.
		deadline := time.Now().Add(5 * time.Second)
		for i, ch := range chs {
			for {
				if err := bs[1].Publish(context.Background(), "changes", []byte("tools")); err != nil {
					t.Fatal(err)
				}
				select {
				case ev := <-ch:
					if ev.From != "b" || string(ev.Data) != "tools" {
						t.Fatalf("replica %d heard %+v", i, ev)
					}
				case <-time.After(50 * time.Millisecond):
					if time.Now().After(deadline) {
						t.Fatalf("replica %d heard nothing", i)
					}
					continue
				}
				break
			}
		}
	})
	t.Run("heard once Subscribe returns, a request once the bus is joined", func(t *testing.T) {
		bs := newBuses(t, "a", "b")
		ch, cancel := bs[0].Subscribe("now")
		t.Cleanup(cancel)
		if err := bs[1].Publish(context.Background(), "now", []byte("1")); err != nil {
			t.Fatal(err)
		}
		if ev := recv(t, ch); string(ev.Data) != "1" {
			t.Fatalf("heard %+v", ev)
		}
		bs[1].Handle("echo", func(_ context.Context, _ string, d []byte) ([]byte, error) { return d, nil })
		if got, err := bs[0].Request(context.Background(), "b", "echo", []byte("x")); err != nil || string(got) != "x" {
			t.Fatalf("request at once: %q, %v", got, err)
		}
	})
	t.Run("an unsubscribed topic hears nothing", func(t *testing.T) {
		bs := newBuses(t, "a", "b")
		ch, cancel := bs[0].Subscribe("x")
		cancel()
		bs[1].Publish(context.Background(), "x", []byte("1"))
		select {
		case ev := <-ch:
			t.Fatalf("heard %+v after cancel", ev)
		case <-time.After(100 * time.Millisecond):
		}
	})
	t.Run("request and reply", func(t *testing.T) {
		bs := newBuses(t, "a", "b")
		bs[1].Handle("echo", func(_ context.Context, from string, data []byte) ([]byte, error) {
			return append([]byte(from+":"), data...), nil
		})
		bs[1].Handle("fail", func(context.Context, string, []byte) ([]byte, error) { return nil, errors.New("no such thing") })
		got, err := requestSoon(bs[0], "b", "echo", []byte("hi"))
		if err != nil || string(got) != "a:hi" {
			t.Fatalf("echo = %q, %v", got, err)
		}
		_, err = bs[0].Request(context.Background(), "b", "fail", nil)
		var re *RemoteError
		if !errors.As(err, &re) || re.Replica != "b" || re.Msg != "no such thing" {
			t.Fatalf("fail: %v", err)
		}
	})
	t.Run("a replica that is gone is ErrGone at once", func(t *testing.T) {
		bs := newBuses(t, "a", "b")
		bs[1].Handle("echo", func(_ context.Context, _ string, d []byte) ([]byte, error) { return d, nil })
		if _, err := requestSoon(bs[0], "b", "echo", nil); err != nil {
			t.Fatal(err)
		}
		bs[1].Close()
		start := time.Now()
		_, err := bs[0].Request(context.Background(), "b", "echo", nil)
		// Redis counts no subscriber at once; miniredis may notice the
		// closed connection only after the request's timeout (2 s).
		if !errors.Is(err, ErrGone) || time.Since(start) > 3*time.Second {
			t.Fatalf("after close: %v in %s", err, time.Since(start))
		}
		if _, err := bs[0].Request(context.Background(), "nobody", "echo", nil); !errors.Is(err, ErrGone) {
			t.Fatalf("unknown replica: %v", err)
		}
	})
	t.Run("the asker giving up ends the handler's ctx", func(t *testing.T) {
		bs := newBuses(t, "a", "b")
		bs[1].Handle("echo", func(_ context.Context, _ string, d []byte) ([]byte, error) { return d, nil })
		if _, err := requestSoon(bs[0], "b", "echo", nil); err != nil {
			t.Fatal(err)
		}
		started, ended := make(chan struct{}), make(chan error, 1)
		bs[1].Handle("wait", func(ctx context.Context, _ string, _ []byte) ([]byte, error) {
			close(started)
			<-ctx.Done()
			ended <- ctx.Err()
			return nil, nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		asked := make(chan error, 1)
		go func() {
			_, err := bs[0].Request(ctx, "b", "wait", nil)
			asked <- err
		}()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("the handler did not start")
		}
		cancel()
		if err := <-asked; !errors.Is(err, context.Canceled) {
			t.Fatalf("the request: %v", err)
		}
		// Well within the bus's timeout (2 s), which would end it too.
		select {
		case err := <-ended:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("the handler's ctx ended by %v, not cancelled", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the handler's ctx did not end")
		}
	})
	t.Run("a handler that does not answer in time is ErrGone", func(t *testing.T) {
		bs := newBuses(t, "a", "b")
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		// It answers only when the test ends: one that answered when its
		// ctx ends (the same timeout, begun a little later) could reach a
		// loaded asker before its own timer does, and be taken.
		bs[1].Handle("hang", func(context.Context, string, []byte) ([]byte, error) {
			<-release
			return nil, nil
		})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := requestUntil(ctx, bs[0], "b", "hang"); !errors.Is(err, ErrGone) {
			t.Fatalf("hang: %v", err)
		}
	})
}

// requestSoon retries while the replica's own subscription is still being
// made (Redis subscribes asynchronously).
func requestSoon(b Bus, to, name string, data []byte) ([]byte, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := b.Request(context.Background(), to, name, data)
		if !errors.Is(err, ErrGone) || time.Now().After(deadline) {
			return got, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func requestUntil(ctx context.Context, b Bus, to, name string) ([]byte, error) {
	for {
		start := time.Now()
		got, err := b.Request(ctx, to, name, nil)
		if !errors.Is(err, ErrGone) || time.Since(start) > time.Second {
			return got, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRecordsMemory(t *testing.T) {
	now := time.Unix(1000, 0)
	runRecords(t, &MemoryRecords{Now: func() time.Time { return now }}, func(d time.Duration) { now = now.Add(d) })
}

func TestRecordsMiniredis(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	runRecords(t, RedisRecords{RDB: rdb}, m.FastForward)
}

func runRecords(t *testing.T, r Records, advance func(time.Duration)) {
	ctx := context.Background()
	if _, err := r.Get(ctx, "k", time.Minute); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty: %v", err)
	}
	if err := r.Put(ctx, "k", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	advance(40 * time.Second)
	if got, err := r.Get(ctx, "k", time.Minute); err != nil || string(got) != "v" {
		t.Fatalf("get = %q, %v", got, err)
	}
	advance(40 * time.Second) // 80 s after Put, 40 s after the Get refreshed it
	if _, err := r.Get(ctx, "k", time.Minute); err != nil {
		t.Fatalf("refreshed record expired: %v", err)
	}
	advance(61 * time.Second)
	if _, err := r.Get(ctx, "k", time.Minute); !errors.Is(err, ErrNotFound) {
		t.Fatalf("expired record: %v", err)
	}
	r.Put(ctx, "k", []byte("v"), time.Minute)
	if ok, err := r.Delete(ctx, "k"); !ok || err != nil {
		t.Fatalf("delete = %v, %v", ok, err)
	}
	if ok, _ := r.Delete(ctx, "k"); ok {
		t.Fatal("deleted twice")
	}
}

func TestRecordsSwapMemory(t *testing.T) {
	now := time.Unix(1000, 0)
	runSwap(t, &MemoryRecords{Now: func() time.Time { return now }}, func(d time.Duration) { now = now.Add(d) })
}

func TestRecordsSwapMiniredis(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	runSwap(t, RedisRecords{RDB: rdb}, m.FastForward)
}

func TestRecordsSwapRedisServer(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Server(t)})
	t.Cleanup(func() { rdb.Close() })
	runSwap(t, RedisRecords{RDB: rdb}, nil)
}

// runSwap: Swap writes only over the value it was given, keeps the time
// to live (Peek does not refresh it), and is false for a record gone.
// advance nil: a real server's clock, not moved.
func runSwap(t *testing.T, r Records, advance func(time.Duration)) {
	ctx := context.Background()
	if ok, err := r.Swap(ctx, "s", []byte("a"), []byte("b")); ok || err != nil {
		t.Fatalf("swap of no record = %v, %v", ok, err)
	}
	if _, err := r.Peek(ctx, "s"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("peek of no record: %v", err)
	}
	r.Put(ctx, "s", []byte("a"), time.Minute)
	if ok, err := r.Swap(ctx, "s", []byte("x"), []byte("b")); ok || err != nil {
		t.Fatalf("swap over another value = %v, %v", ok, err)
	}
	if got, err := r.Peek(ctx, "s"); err != nil || string(got) != "a" {
		t.Fatalf("after a refused swap: %q, %v", got, err)
	}
	if ok, err := r.Swap(ctx, "s", []byte("a"), []byte("b")); !ok || err != nil {
		t.Fatalf("swap = %v, %v", ok, err)
	}
	if got, err := r.Peek(ctx, "s"); err != nil || string(got) != "b" {
		t.Fatalf("after the swap: %q, %v", got, err)
	}
	if advance == nil {
		return
	}
	advance(40 * time.Second)
	r.Peek(ctx, "s")
	r.Swap(ctx, "s", []byte("b"), []byte("c"))
	advance(21 * time.Second) // 61 s after Put: neither Peek nor Swap gave it time
	if _, err := r.Peek(ctx, "s"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a record peeked at and swapped outlived its time to live: %v", err)
	}
	if ok, _ := r.Swap(ctx, "s", []byte("c"), []byte("d")); ok {
		t.Fatal("swapped an expired record")
	}
}

func TestRedisUnavailable(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	b := NewRedis(rdb, "a", Options{})
	t.Cleanup(func() { b.Close() })
	m.Close()
	if err := b.Publish(context.Background(), "x", nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("publish: %v", err)
	}
	if _, err := b.Request(context.Background(), "b", "x", nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("request: %v", err)
	}
	if _, err := (RedisRecords{RDB: rdb}).Get(context.Background(), "k", time.Second); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("get: %v", err)
	}
}

// BenchmarkRecordsGet: the per-request Redis cost of a shared legacy
// session: one GETEX of its record (about 300 bytes) on a real
// redis-server on loopback.
//
//	go test ./runtime/cluster -run '^$' -bench BenchmarkRecordsGet -benchtime 5000x -count 3
func BenchmarkRecordsGet(b *testing.B) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Server(b)})
	b.Cleanup(func() { rdb.Close() })
	r := RedisRecords{RDB: rdb}
	ctx := context.Background()
	if err := r.Put(ctx, "k", make([]byte, 300), time.Minute); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := r.Get(ctx, "k", time.Minute); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordsSwap: the Redis cost of a change of a shared session's
// record (a resources/subscribe or unsubscribe, a log level): a GET of it
// and the compare-and-set script, on a real redis-server on loopback.
//
//	go test ./runtime/cluster -run '^$' -bench BenchmarkRecordsSwap -benchtime 5000x -count 3
func BenchmarkRecordsSwap(b *testing.B) {
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Server(b)})
	b.Cleanup(func() { rdb.Close() })
	r := RedisRecords{RDB: rdb}
	ctx := context.Background()
	vals := [2][]byte{make([]byte, 300), make([]byte, 300)}
	vals[1][0] = 1
	if err := r.Put(ctx, "k", vals[0], time.Minute); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		old, err := r.Peek(ctx, "k")
		if err != nil {
			b.Fatal(err)
		}
		if ok, err := r.Swap(ctx, "k", old, vals[(i+1)%2]); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// TestResubscribeRace*: a topic's last subscriber leaving while a new one
// arrives leaves the new one hearing what is published: over Redis the
// old one's UNSUBSCRIBE must not reach it after the new one's SUBSCRIBE
// (a GET stream reconnecting to the replica its old one is leaving).
func TestResubscribeRaceMiniredis(t *testing.T) {
	runResubscribe(t, redisBuses(miniredis.RunT(t).Addr()))
}

func TestResubscribeRaceRedisServer(t *testing.T) {
	runResubscribe(t, redisBuses(redistest.Server(t)))
}

func runResubscribe(t *testing.T, newBuses join) {
	b := newBuses(t, "a")[0]
	ctx := context.Background()
	var events <-chan Event
	var cancel func()
	arrived := make(chan struct{})
	// The new subscriber comes while the last one is between its decision
	// and its UNSUBSCRIBE; it is given time to send its SUBSCRIBE first.
	testHookUnsubscribing = func() {
		go func() { events, cancel = b.Subscribe("topic"); close(arrived) }()
		time.Sleep(50 * time.Millisecond)
	}
	defer func() { testHookUnsubscribing = nil }()
	_, leave := b.Subscribe("topic")
	leave()
	testHookUnsubscribing = nil
	<-arrived
	defer cancel()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		if err := b.Publish(ctx, "topic", []byte("x")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-events:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("the subscriber that arrived as the last one left hears nothing")
}
