// Command gencerts (go run ./cmd/gencerts -dir DIR) writes in DIR the throw-away
// PKI of package recallref/internal/testpki: its CA, server, client and stranger files.
package main

import (
	"flag"
	"fmt"
	"os"

	"recallref/internal/testpki"
)

func main() {
	dir := flag.String("dir", "", "write the files in `DIR` (created when needed)")
	flag.Parse()
	if *dir == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gencerts -dir DIR")
		os.Exit(2)
	}
	if err := testpki.Write(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gencerts:", err)
		os.Exit(1)
	}
}
