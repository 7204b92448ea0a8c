package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Records keeps values under keys for a time to live, refreshed when
// read: the legacy sessions' records. Keys are the caller's (it hashes
// what must not be readable).
type Records interface {
	// Put stores val under key for ttl.
	Put(ctx context.Context, key string, val []byte, ttl time.Duration) error
	// Get returns key's value and gives it ttl again; ErrNotFound when
	// there is none (never stored, deleted, or expired).
	Get(ctx context.Context, key string, ttl time.Duration) ([]byte, error)
	// Delete drops key; it reports whether there was one.
	Delete(ctx context.Context, key string) (bool, error)
	// Exists reports whether key has a value, leaving its time to live
	// as it is (a replica checking a session lives on elsewhere).
	Exists(ctx context.Context, key string) (bool, error)
	// Peek returns key's value, leaving its time to live as it is;
	// ErrNotFound when there is none (a replica reading what a session
	// it does not serve now holds: its subscriptions).
	Peek(ctx context.Context, key string) ([]byte, error)
	// Swap replaces key's value by val if it is old now, keeping its time
	// to live; it reports whether it did (false: another writer changed
	// it since old was read, or it is gone). Writers that read, change
	// and write a record back lose no one's change this way.
	Swap(ctx context.Context, key string, old, val []byte) (bool, error)
}

// MemoryRecords are Records in this process's memory.
type MemoryRecords struct {
	mu sync.Mutex
	m  map[string]memRecord
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

type memRecord struct {
	val     []byte
	expires time.Time
}

func (r *MemoryRecords) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *MemoryRecords) Put(_ context.Context, key string, val []byte, ttl time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]memRecord{}
	}
	now := r.now()
	for k, v := range r.m { // expired ones go as new ones come
		if !now.Before(v.expires) {
			delete(r.m, k)
		}
	}
	r.m[key] = memRecord{val: append([]byte(nil), val...), expires: now.Add(ttl)}
	return nil
}

func (r *MemoryRecords) Get(_ context.Context, key string, ttl time.Duration) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[key]
	now := r.now()
	if !ok || !now.Before(v.expires) {
		delete(r.m, key)
		return nil, ErrNotFound
	}
	v.expires = now.Add(ttl)
	r.m[key] = v
	return append([]byte(nil), v.val...), nil
}

func (r *MemoryRecords) Delete(_ context.Context, key string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.m[key]
	delete(r.m, key)
	return ok, nil
}

func (r *MemoryRecords) Exists(_ context.Context, key string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[key]
	return ok && r.now().Before(v.expires), nil
}

func (r *MemoryRecords) Peek(_ context.Context, key string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[key]
	if !ok || !r.now().Before(v.expires) {
		return nil, ErrNotFound
	}
	return append([]byte(nil), v.val...), nil
}

func (r *MemoryRecords) Swap(_ context.Context, key string, old, val []byte) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[key]
	if !ok || !r.now().Before(v.expires) || !bytes.Equal(v.val, old) {
		return false, nil
	}
	v.val = append([]byte(nil), val...)
	r.m[key] = v
	return true, nil
}

// RedisRecords are Records in Redis under "mcpx:" + key, with Redis's own
// expiry (PX), refreshed by GETEX.
type RedisRecords struct{ RDB *redis.Client }

func unavailable(err error) error { return fmt.Errorf("%w: %v", ErrUnavailable, err) }

func (r RedisRecords) Put(ctx context.Context, key string, val []byte, ttl time.Duration) error {
	if err := r.RDB.Set(ctx, "mcpx:"+key, val, ttl).Err(); err != nil {
		return unavailable(err)
	}
	return nil
}

func (r RedisRecords) Get(ctx context.Context, key string, ttl time.Duration) ([]byte, error) {
	return record(r.RDB.GetEx(ctx, "mcpx:"+key, ttl))
}

// record is a read's value, ErrNotFound for no key.
func record(cmd *redis.StringCmd) ([]byte, error) {
	b, err := cmd.Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, ErrNotFound
	case err != nil:
		return nil, unavailable(err)
	}
	return b, nil
}

func (r RedisRecords) Delete(ctx context.Context, key string) (bool, error) {
	n, err := r.RDB.Del(ctx, "mcpx:"+key).Result()
	if err != nil {
		return false, unavailable(err)
	}
	return n > 0, nil
}

func (r RedisRecords) Exists(ctx context.Context, key string) (bool, error) {
	n, err := r.RDB.Exists(ctx, "mcpx:"+key).Result()
	if err != nil {
		return false, unavailable(err)
	}
	return n > 0, nil
}

func (r RedisRecords) Peek(ctx context.Context, key string) ([]byte, error) {
	return record(r.RDB.Get(ctx, "mcpx:"+key))
}

// swapScript sets KEYS[1] to ARGV[2] if it holds ARGV[1], with the time
// to live it had: a compare-and-set in one step on the server.
var swapScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
else
  redis.call('SET', KEYS[1], ARGV[2])
end
return 1`)

func (r RedisRecords) Swap(ctx context.Context, key string, old, val []byte) (bool, error) {
	n, err := swapScript.Run(ctx, r.RDB, []string{"mcpx:" + key}, old, val).Int()
	if err != nil {
		return false, unavailable(err)
	}
	return n == 1, nil
}
