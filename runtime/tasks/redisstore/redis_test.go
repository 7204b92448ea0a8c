package redisstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/mcpx-dev/mcpx/runtime/internal/redistest"
	"github.com/mcpx-dev/mcpx/runtime/tasks"
	"github.com/mcpx-dev/mcpx/runtime/tasks/storetest"
)

// TestContractMiniredis: the store keeps the tasks.Store contract on an
// in-process Redis.
func TestContractMiniredis(t *testing.T) {
	storetest.Run(t, func(t *testing.T, max int, c *storetest.Clock) tasks.Store {
		m := miniredis.RunT(t)
		rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
		t.Cleanup(func() { rdb.Close() })
		return New(rdb, Options{Max: max, Now: c.Now})
	})
}

// redisServer starts a real redis-server (redistest.Server).
func redisServer(t *testing.T) string { return redistest.Server(t) }

// TestContractRedisServer: the same contract on a real redis-server, a
// fresh database each check (FLUSHDB).
func TestContractRedisServer(t *testing.T) {
	addr := redisServer(t)
	storetest.Run(t, func(t *testing.T, max int, c *storetest.Clock) tasks.Store {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { rdb.Close() })
		if err := rdb.FlushDB(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		return New(rdb, Options{Max: max, Now: c.Now})
	})
}

// TestSharedAcrossStores: two stores on one Redis (two replicas) see one
// set of tasks, and the bound is shared.
func TestSharedAcrossStores(t *testing.T) {
	m := miniredis.RunT(t)
	ra, rb := redis.NewClient(&redis.Options{Addr: m.Addr()}), redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { ra.Close(); rb.Close() }) // their goroutines end with them (goleak in TestMain)
	a, b := New(ra, Options{Max: 2}), New(rb, Options{Max: 2})
	ctx := context.Background()
	now := time.Now()
	rec := func(id string) *tasks.Record {
		return &tasks.Record{ID: id, Owner: "o", Status: "working", CreatedAt: now, LastUpdatedAt: now, TTL: time.Hour}
	}
	if err := a.Create(ctx, rec("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Update(ctx, "x", func(r *tasks.Record) error { r.Status = "completed"; return nil }); err != nil {
		t.Fatal(err)
	}
	if r, err := a.Get(ctx, "x"); err != nil || r.Status != "completed" {
		t.Fatalf("%+v %v", r, err)
	}
	b.Create(ctx, rec("y"))
	if err := a.Create(ctx, rec("z")); !errors.Is(err, tasks.ErrFull) {
		t.Errorf("a third task over two replicas of bound 2: %v", err)
	}
}

// TestUnavailable: with Redis gone, every method fails saying the store
// is unavailable, and works again once it is back.
func TestUnavailable(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	s := New(rdb, Options{})
	ctx := context.Background()
	addr := m.Addr()
	m.Close()
	_, err := s.Get(ctx, "x")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "unavailable") {
		t.Fatalf("get with Redis down: %v", err)
	}
	if err := s.Create(ctx, &tasks.Record{ID: "x", CreatedAt: time.Now()}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("create with Redis down: %v", err)
	}
	m2 := miniredis.NewMiniRedis()
	if err := m2.StartAddr(addr); err != nil {
		t.Skipf("cannot restart on %s: %v", addr, err)
	}
	defer m2.Close()
	if _, err := s.Get(ctx, "x"); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("after Redis is back: %v", err)
	}
}
