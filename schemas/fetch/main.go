// Command fetch puts the pinned JSON Schema files listed in
// schemas/manifest.json into the schemas directory, copying each from a local
// mirror when it has it and downloading it otherwise, and checking every file
// against its sha256 before writing anything. Run it as `make schemas` or
// `go run ./schemas/fetch`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/mcpx-dev/mcpx/schemas"
)

func main() {
	dir := flag.String("dir", schemas.SourceDir(), "directory to write the schema files into")
	mirror := flag.String("mirror", schemas.DefaultMirror(), "local mirror of the schema files (default $"+schemas.MirrorEnv+", else ../shared/spec next to the repository when it exists); empty to download")
	offline := flag.Bool("offline", false, "never download: take every file from the mirror")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: fetch [-dir DIR] [-mirror DIR] [-offline]")
		os.Exit(2)
	}

	f := &schemas.Fetcher{Dir: *dir, Mirror: *mirror, Offline: *offline, Log: os.Stdout}
	if err := f.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "fetch schemas: %v\n", err)
		os.Exit(1)
	}
}
