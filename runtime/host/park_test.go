package host_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/host"
)

// TestGatewayParkSettings: host.Gateway gives the gateway the config's
// mcpx.parkTimeout and mcpx.maxParked (unset: 0, the gateway's defaults).
func TestGatewayParkSettings(t *testing.T) {
	for doc, want := range map[string]struct {
		timeout time.Duration
		max     int
	}{
		`{"mcpServers": {}}`: {0, 0},
		`{"mcpServers": {}, "mcpx": {"parkTimeout": "2m", "maxParked": 7}}`: {2 * time.Minute, 7},
	} {
		cfg, err := config.Parse("p.json", []byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := host.Gateway(context.Background(), cfg, mcp.Implementation{Name: "mcpx", Version: "1"}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		g.Close()
		if g.ParkTimeout != want.timeout || g.MaxParked != want.max {
			t.Errorf("%s: ParkTimeout %v, MaxParked %d; want %v, %d", doc, g.ParkTimeout, g.MaxParked, want.timeout, want.max)
		}
	}
}
