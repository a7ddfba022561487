// Package server serves the contract's HTTP API (docs/contract.md) over an
// archive: archiving blocks, reading them (conditional and incremental reads
// of /blocks), running the recall tools, and the debug routes. The README's
// "The Go reference" lists the routes and how each answers.
package server
