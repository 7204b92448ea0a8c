// Package gatewaytest runs real MCP clients against mcpx fronting real
// upstream MCP servers: the official Go SDK (github.com/modelcontextprotocol/go-sdk)
// and mcp-go (github.com/mark3labs/mcp-go) clients, each pinned to every
// protocol revision in the generated tables it speaks, through one gateway
// (config.Parse, host.Gateway) whose upstreams are go-sdk and mcp-go
// servers pinned to every revision in the tables they speak and the
// mcpx-fixture binary, each a process on stdio; and, when it is installed,
// the reference @modelcontextprotocol/server-everything from npm.
// TestRealPeerCoverage reports a revision in the tables that no real
// client, or no real upstream, speaks.
//
// Every message mcpx sends a client is closed-world validated
// (testkit/closedworld) for the client's revision, and every message it
// sends an upstream for the upstream's.
//
// The package holds only tests; this file exists so that it builds.
package gatewaytest
