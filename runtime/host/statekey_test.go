package host_test

import (
	"context"
	"encoding/base64"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/generated/mcp"
	"github.com/mcpx-dev/mcpx/runtime/config"
	"github.com/mcpx-dev/mcpx/runtime/host"
	"github.com/mcpx-dev/mcpx/runtime/requeststate"
)

// TestGatewayStateKey: host.Gateway seals requestState with the config's
// mcpx.stateKey (so two gateways given it open each other's states, as
// replicas must), else $MCPX_STATE_KEY, else a key of its own; a bad
// $MCPX_STATE_KEY is an error at startup saying why.
func TestGatewayStateKey(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))
	other := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("o", 32)))
	build := func(cfgKey string) (*requeststate.Sealer, error) {
		t.Helper()
		doc := `{"mcpServers": {}}`
		if cfgKey != "" {
			doc = `{"mcpServers": {}, "mcpx": {"stateKey": "` + cfgKey + `"}}`
		}
		cfg, err := config.Parse("k.json", []byte(doc), nil)
		if err != nil {
			t.Fatal(err)
		}
		g, err := host.Gateway(context.Background(), cfg, mcp.Implementation{Name: "mcpx", Version: "1"}, slog.New(slog.DiscardHandler))
		if err != nil {
			return nil, err
		}
		defer g.Close()
		return g.States, nil
	}
	b := requeststate.Binding{Method: "tools/call", Namespace: "a"}
	opens := func(seal, open *requeststate.Sealer) bool {
		st, err := seal.Seal(b, requeststate.Payload{Upstream: "x"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = open.Open(st, b)
		return err == nil
	}

	t.Setenv(requeststate.EnvKey, other)
	a, err := build(key)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := build(key)
	env, _ := build("")
	if !opens(a, c) {
		t.Error("two gateways with one mcpx.stateKey do not open each other's states")
	}
	if opens(a, env) {
		t.Error("mcpx.stateKey did not win over MCPX_STATE_KEY")
	}
	env2, _ := build("")
	if !opens(env, env2) {
		t.Error("two gateways with one MCPX_STATE_KEY do not open each other's states")
	}

	t.Setenv(requeststate.EnvKey, "")
	r1, _ := build("")
	r2, _ := build("")
	if r1 == nil || opens(r1, r2) {
		t.Error("without a key, two gateways share one")
	}

	t.Setenv(requeststate.EnvKey, base64.StdEncoding.EncodeToString([]byte("sixteen bytes!!!")))
	if _, err := build(""); err == nil || !strings.Contains(err.Error(), "MCPX_STATE_KEY: the key is 16 bytes; a state key is at least 32") {
		t.Errorf("a short MCPX_STATE_KEY: %v, want an error saying so", err)
	}
}
