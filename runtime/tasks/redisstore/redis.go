// Package redisstore is a [tasks.Store] in Redis (github.com/redis/go-redis/v9),
// shared by every mcpx replica that names the same Redis: a task created
// on one is read, updated, listed and cancelled on any.
//
// Keys, under a prefix ("mcpx:" by default):
//
//	<prefix>task:<id>          the record as JSON, expiring with the task
//	<prefix>tasks:live         sorted set of live ids by expiry (ms; +inf for none): the count bound, and Expire
//	<prefix>tasks:owner:<o>    sorted set of an owner's ids, members "<created ns, 20 digits>:<id>", read by lex order: List
//
// An owner is stored as it is given; mcpx gives a hash, never a session
// id (see tasks.Record.Owner). Create is one Lua script (bound checked,
// record and indexes written together); Update is optimistic (WATCH, then
// MULTI), retried when another replica changed the task in between.
package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpx-dev/mcpx/runtime/tasks"
)

// Store is a tasks.Store in Redis. Create it with [New].
type Store struct {
	rdb    redis.UniversalClient
	prefix string
	max    int
	now    func() time.Time
	where  string // for errors: the address
}

// Options configure a Store.
type Options struct {
	// Prefix goes before every key; "" means "mcpx:".
	Prefix string
	// Max is how many live tasks the store holds at most, across
	// replicas; 0 means tasks.DefaultMax.
	Max int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

var _ tasks.Store = (*Store)(nil)

// New returns a store over rdb.
func New(rdb redis.UniversalClient, opt Options) *Store {
	s := &Store{rdb: rdb, prefix: opt.Prefix, max: opt.Max, now: opt.Now}
	if s.prefix == "" {
		s.prefix = "mcpx:"
	}
	if s.max <= 0 {
		s.max = tasks.DefaultMax
	}
	if s.now == nil {
		s.now = time.Now
	}
	if c, ok := rdb.(*redis.Client); ok {
		s.where = c.Options().Addr
	}
	return s
}

// ErrUnavailable wraps every failure to reach Redis: the request that
// needed the store fails saying so; others go on. It is
// tasks.ErrUnavailable, which the edge maps to its answers.
var ErrUnavailable = tasks.ErrUnavailable

func (s *Store) unavailable(err error) error {
	if err == nil || errors.Is(err, tasks.ErrNotFound) || errors.Is(err, tasks.ErrFull) || errors.Is(err, tasks.ErrExists) {
		return err
	}
	where := ""
	if s.where != "" {
		where = " at " + s.where
	}
	return fmt.Errorf("%w (Redis%s): %v", ErrUnavailable, where, err)
}

func (s *Store) taskKey(id string) string     { return s.prefix + "task:" + id }
func (s *Store) liveKey() string              { return s.prefix + "tasks:live" }
func (s *Store) ownerKey(owner string) string { return s.prefix + "tasks:owner:" + owner }

// member is a task's entry in its owner's index: creation order by lex.
func member(r *tasks.Record) string {
	return fmt.Sprintf("%020d:%s", r.CreatedAt.UnixNano(), r.ID)
}

// expiry is the task's expiry in Unix ms, +inf for none.
func expiry(r *tasks.Record) float64 {
	if r.TTL <= 0 {
		return math.Inf(1)
	}
	return float64(r.CreatedAt.Add(r.TTL).UnixMilli())
}

// create: KEYS task, live, owner; ARGV record, expiry score, now ms, max,
// member, px (0 for no expiry), id. Drops what expired from the live set,
// then refuses when full, or when the id is taken.
var create = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[3])
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
local n = redis.call('ZCARD', KEYS[2])
if n >= tonumber(ARGV[4]) then return 'full:' .. n end
if tonumber(ARGV[6]) > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[6])
else
  redis.call('SET', KEYS[1], ARGV[1])
end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[7])
redis.call('ZADD', KEYS[3], 0, ARGV[5])
return 'ok'
`)

// Create implements tasks.Store.
func (s *Store) Create(ctx context.Context, rec *tasks.Record) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	px := int64(0) // no expiry
	score := "+inf"
	if rec.TTL > 0 {
		px = max(rec.CreatedAt.Add(rec.TTL).Sub(s.now()).Milliseconds(), 1)
		score = strconv.FormatFloat(expiry(rec), 'f', 0, 64)
	}
	res, err := create.Run(ctx, s.rdb, []string{s.taskKey(rec.ID), s.liveKey(), s.ownerKey(rec.Owner)},
		raw, score, s.now().UnixMilli(), s.max, member(rec), px, rec.ID).Text()
	if err != nil {
		return s.unavailable(err)
	}
	switch {
	case res == "exists":
		return tasks.ErrExists
	case strings.HasPrefix(res, "full:"):
		return fmt.Errorf("%w: it holds %s tasks, the most it may (mcpx.maxTasks), and none has expired", tasks.ErrFull, strings.TrimPrefix(res, "full:"))
	}
	return nil
}

// Get implements tasks.Store.
func (s *Store) Get(ctx context.Context, id string) (*tasks.Record, error) {
	raw, err := s.rdb.Get(ctx, s.taskKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, tasks.ErrNotFound
	}
	if err != nil {
		return nil, s.unavailable(err)
	}
	var stored tasks.Record
	if json.Unmarshal(raw, &stored) == nil && stored.Lapsed(s.now()) {
		// The lease lapsed: store the task failed, so the record no
		// longer depends on a reader's clock (Update decodes it failed
		// and writes it back as it finds it).
		return s.Update(ctx, id, func(*tasks.Record) error { return nil })
	}
	return s.decode(raw)
}

func (s *Store) decode(raw []byte) (*tasks.Record, error) {
	var r tasks.Record
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("the task store holds a record mcpx cannot read: %w", err)
	}
	now := s.now()
	if r.Expired(now) {
		return nil, tasks.ErrNotFound
	}
	r.FailLapsed(now)
	return &r, nil
}

// updateTries bounds the optimistic retries of one Update.
const updateTries = 16

// Update implements tasks.Store.
func (s *Store) Update(ctx context.Context, id string, fn func(*tasks.Record) error) (*tasks.Record, error) {
	key := s.taskKey(id)
	var out *tasks.Record
	for range updateTries {
		err := s.rdb.Watch(ctx, func(tx *redis.Tx) error {
			raw, err := tx.Get(ctx, key).Bytes()
			if errors.Is(err, redis.Nil) {
				return tasks.ErrNotFound
			}
			if err != nil {
				return err
			}
			r, err := s.decode(raw)
			if err != nil {
				return err
			}
			if err := fn(r); err != nil {
				return errFn{err}
			}
			r.ID = id
			next, err := json.Marshal(r)
			if err != nil {
				return err
			}
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.SetArgs(ctx, key, next, redis.SetArgs{KeepTTL: true})
				return nil
			})
			if err == nil {
				out = r
			}
			return err
		}, key)
		var fe errFn
		switch {
		case err == nil:
			return out, nil
		case errors.Is(err, redis.TxFailedErr):
			continue // changed by someone else in between: read it again
		case errors.As(err, &fe):
			return nil, fe.err
		default:
			return nil, s.unavailable(err)
		}
	}
	return nil, s.unavailable(fmt.Errorf("task %s kept changing under %d updates", id, updateTries))
}

// errFn carries fn's own error through Watch untouched.
type errFn struct{ err error }

func (e errFn) Error() string { return e.err.Error() }

// List implements tasks.Store. The cursor is the last task's index
// member; entries of tasks that expired are dropped from the index as
// they are met.
func (s *Store) List(ctx context.Context, owner, cursor string, limit int) ([]*tasks.Record, string, error) {
	from := "-"
	if cursor != "" {
		if _, id, ok := strings.Cut(cursor, ":"); !ok || id == "" {
			return nil, "", fmt.Errorf("invalid cursor %q: pass a nextCursor from a previous page", cursor)
		}
		from = "(" + cursor
	}
	const batch = 64
	var out []*tasks.Record
	var at []string // the index member of each of out
	for {
		members, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.ownerKey(owner), Start: from, Stop: "+", ByLex: true, Count: batch}).Result()
		if err != nil {
			return nil, "", s.unavailable(err)
		}
		if len(members) == 0 {
			return out, "", nil
		}
		keys := make([]string, len(members))
		for i, m := range members {
			_, id, _ := strings.Cut(m, ":")
			keys[i] = s.taskKey(id)
		}
		vals, err := s.rdb.MGet(ctx, keys...).Result()
		if err != nil {
			return nil, "", s.unavailable(err)
		}
		var gone []any
		for i, v := range vals {
			str, ok := v.(string)
			if !ok {
				gone = append(gone, members[i])
				continue
			}
			r, err := s.decode([]byte(str))
			if err != nil {
				gone = append(gone, members[i])
				continue
			}
			if limit > 0 && len(out) == limit {
				// One more than a page: there is a next page.
				return out, at[len(at)-1], nil
			}
			out, at = append(out, r), append(at, members[i])
		}
		if len(gone) > 0 {
			s.rdb.ZRem(ctx, s.ownerKey(owner), gone...)
		}
		if len(members) < batch {
			return out, "", nil
		}
		from = "(" + members[len(members)-1]
	}
}

// Expire implements tasks.Store: the ids whose time to live passed at now,
// each returned to one replica only (the one whose ZREM took it).
func (s *Store) Expire(ctx context.Context, now time.Time) ([]string, error) {
	ids, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.liveKey(), Start: "-inf", Stop: strconv.FormatInt(now.UnixMilli(), 10), ByScore: true}).Result()
	if err != nil {
		return nil, s.unavailable(err)
	}
	var gone []string
	for _, id := range ids {
		n, err := s.rdb.ZRem(ctx, s.liveKey(), id).Result()
		if err != nil {
			return gone, s.unavailable(err)
		}
		if n == 1 {
			s.rdb.Del(ctx, s.taskKey(id))
			gone = append(gone, id)
		}
	}
	return gone, nil
}
