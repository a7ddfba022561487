// Command gencerts writes the throw-away PKI of package
// recallref/internal/testpki in DIR: ca.pem, server.pem and server-key.pem
// (the reference's -tls-cert and -tls-key), client.pem and client-key.pem
// (signed by the CA, which -client-ca ca.pem requires), stranger.pem and
// stranger-key.pem (self-signed).
//
// Usage: go run ./cmd/gencerts -dir DIR
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
