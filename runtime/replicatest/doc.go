// Package replicatest runs mcpx as several replicas behind a load
// balancer, as processes: three `mcpx serve` binaries on loopback sharing
// one real redis-server, behind a round-robin proxy written in the test
// (every request to the next replica), in front of one shared HTTP
// upstream (mcpx-fixture --listen) and a stdio upstream that each replica
// runs itself (stdio upstreams are per replica: a process's pipes cannot
// be shared). The same scenarios run on one replica with the memory
// store, so that nothing regresses for a single mcpx.
//
// The package holds only tests; this file is its documentation.
package replicatest
