package host

import (
	"github.com/mcpx-dev/mcpx/runtime/admin"
	"github.com/mcpx-dev/mcpx/runtime/gateway"
	"github.com/mcpx-dev/mcpx/runtime/metrics"
	"github.com/mcpx-dev/mcpx/runtime/upstream"
)

// Watch points the admin listener's /readyz (srv, if not nil) and the
// scraped metrics (m, if not nil) at a gateway GatewayWith built: its
// upstreams' states and restarts (ups says which are there now: a reload
// changes them), its parked calls.
func Watch(srv *admin.Server, m *metrics.Metrics, g *gateway.Gateway, ups func() []Upstream) {
	if m != nil {
		m.WatchParked(g.ParkedNow)
		m.WatchUpstreams(upstream.States, func() []metrics.UpstreamStatus {
			now := ups()
			out := make([]metrics.UpstreamStatus, len(now))
			for i, u := range now {
				st := u.Client.Status()
				out[i] = metrics.UpstreamStatus{Name: u.Name, State: st.State, Restarts: st.Restarts}
			}
			return out
		})
	}
	if srv != nil {
		srv.SetReady(func() admin.Readiness { return Readiness(ups()) })
	}
}

// Readiness is ready when every eager upstream is up, and names each
// with its state and, when not up, why. A lazy upstream starts with a
// client's first contact and is not waited for.
func Readiness(ups []Upstream) admin.Readiness {
	rd := admin.Readiness{Ready: true, Upstreams: map[string]admin.UpstreamReadiness{}}
	for _, u := range ups {
		if !u.Eager {
			continue
		}
		st := u.Client.Status()
		rd.Upstreams[u.Name] = admin.UpstreamReadiness{State: st.State, Reason: st.Reason}
		if st.State != upstream.StateUp {
			rd.Ready = false
		}
	}
	return rd
}
