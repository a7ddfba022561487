// Command gencerts writes the certificates of a throw-away PKI for tests of
// the reference behind TLS with mutual authentication, ECDSA P-256, valid
// for 7 days (package recallref/internal/testpki):
//
//   - ca.pem: the CA;
//   - server.pem, server-key.pem: signed by the CA, for 127.0.0.1, ::1 and
//     localhost (the reference's -tls-cert and -tls-key);
//   - client.pem, client-key.pem: a client certificate signed by the CA
//     (which the reference requires with -client-ca ca.pem);
//   - stranger.pem, stranger-key.pem: a self-signed client certificate that
//     the CA did not sign.
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
