// Command archlint is the project's own lint check. It fails when
//
//   - a Go file outside tests refers to the go-sdk's stdio or command
//     transports (MC11: Streamable HTTP is the only transport), or
//   - a package under domain/ imports something the domain must not:
//     adapters, app, bun, database/sql, net/http, zerolog, os, or calls the
//     clock (time.Now, time.Since, time.Sleep, …), or
//   - an import crosses the layers outside the domain: ports import an
//     adapter, app or cmd; app imports an adapter or cmd; an adapter
//     imports another adapter; an application module (app/<module>)
//     imports another module, or the shared root package app imports a
//     module (see layerViolation), or
//   - a type in ports/ or app/ takes the name of a domain aggregate (a
//     type the domain loads through an Unmarshal…FromDatabase
//     constructor), bare or prefixed by its package: the aggregate written
//     a second time as a plain record (see aggregates.go).
//
// Usage: archlint [root] (default "."). It prints one line per violation
// and exits 1 when there is any.
package main

import (
	"fmt"
	"os"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	violations, err := Check(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "archlint:", err)
		os.Exit(2)
	}
	for _, v := range violations {
		fmt.Println(v)
	}
	if len(violations) > 0 {
		fmt.Fprintf(os.Stderr, "archlint: %d violation(s)\n", len(violations))
		os.Exit(1)
	}
}

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
