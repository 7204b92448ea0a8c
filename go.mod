module github.com/mcpx-dev/mcpx

go 1.26.0

require (
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/google/go-cmp v0.7.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/text v0.14.0
	golang.org/x/tools v0.52.0 // indirect
)
