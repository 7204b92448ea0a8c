// Package peertest runs real MCP clients against mcpx: the official Go SDK
// (github.com/modelcontextprotocol/go-sdk) and mcp-go
// (github.com/mark3labs/mcp-go), each pinned to every protocol revision it
// speaks (as its SDK lists them) that the generated tables have, over stdio
// (the built `mcpx stdio` binary) and over Streamable HTTP (the streamhttp
// handler served in-process). TestRealClientCoverage reports a revision
// in the tables that neither client speaks.
//
// Every test records the wire: the bytes the client sent and the bytes mcpx
// answered with. Each message mcpx sent is checked by the closed-world
// validator (testkit/closedworld) against the schema of the revision it was
// sent to: a response's result against the result definition of its
// request's method, a notification against ServerNotification, and every
// message against JSONRPCMessage.
//
// The package holds only tests; this file exists so that it builds.
package peertest
