package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is this replica's part of the whole: its bus and the shared
// records.
type Cluster struct {
	Bus     Bus
	Records Records
	// Shared is true on Redis: other replicas may exist.
	Shared bool
	close  func() error
}

// Close leaves the bus and drops the connection.
func (c *Cluster) Close() error {
	err := c.Bus.Close()
	if c.close != nil {
		if cerr := c.close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Open is the cluster the --store URL names: "memory" (or "") is this
// process alone; a Redis URL (redis://..., rediss:// for TLS) is shared
// with the replicas on the same Redis, this one joining under a fresh id.
// A Redis that does not answer now is not an error (see NewRedis).
func Open(url string, log *slog.Logger) (*Cluster, error) {
	if log == nil {
		log = slog.Default()
	}
	if url == "" || url == "memory" {
		return &Cluster{Bus: Local(), Records: &MemoryRecords{}}, nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("--store: %v (want memory, or redis://host:port)", err)
	}
	rdb := redis.NewClient(opt)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		log.Warn("the cluster's Redis does not answer yet; sessions and the bus wait for it", "store", opt.Addr, "err", err)
	}
	id := NewID()
	log.Info("joined the replicas on Redis", "replica", id, "store", opt.Addr)
	return &Cluster{Bus: NewRedis(rdb, id, Options{Log: log}), Records: RedisRecords{RDB: rdb}, Shared: true, close: rdb.Close}, nil
}
