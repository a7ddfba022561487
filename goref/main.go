// Command recallref is the Go reference instance of the recall contract
// (docs/contract.md): an in-memory archive behind the contract's HTTP
// API, used to record the goldens and to fuzz the Python port against.
//
// Usage:
//
//	recallref [-addr 127.0.0.1:0] [-token T] [-first-seq 1] [-exit-on-stdin-eof]
//	          [-no-etag] [-no-since] [-since-history N] [-no-debug]
//	          [-tls-cert FILE -tls-key FILE [-client-ca FILE]]
//	          [-test-rewrite-output OLD=NEW]... [-test-exec-delay D] [-test-exec-status CODE]
//
// It listens on a loopback address only, prints its base URL (such as
// http://127.0.0.1:43121, or https://127.0.0.1:43121 with -tls-cert) as the
// first line on stdout, then serves until SIGINT or SIGTERM (or, with
// -exit-on-stdin-eof, until its standard input closes, as it does when the
// process that started it dies, even by SIGKILL), when it shuts down
// gracefully and exits 0. Bad usage, unusable TLS files included, exits 2.
//
// GET /internal/v1/recall/blocks answers conditional reads (a strong ETag
// on every 200, 304 Not Modified for an If-None-Match that holds it), the
// contract's optional extension; -no-etag makes a Go without it. It also
// answers incremental reads (?since=<tag>: a delta of the blocks made
// readable and unreadable since that tag) for the last -since-history
// changes of the archive; -no-since makes a Go with conditional reads alone.
//
// Under /debug/ it serves routes for the harness and the tests (the request
// log, the tools' reads, the versions, locking a block, resetting the
// archive: see package recallref/server); -no-debug answers them all with a
// bare 404, as a production Go does.
//
// With -tls-cert and -tls-key it serves HTTPS (TLS 1.2 or later), as a
// production Go behind internal TLS; -client-ca then requires a client
// certificate signed by that CA (mutual TLS). go run ./cmd/gencerts -dir DIR
// writes a CA, server and client certificates for tests.
//
// The -test-... flags are for tests only: they make a Go whose tool endpoint,
// POST /internal/v1/tool/exec, breaks the contract: -test-rewrite-output
// rewrites its outputs, -test-exec-delay slows it down, -test-exec-status
// makes it answer an error status instead of running the tool.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"recallref/archive"
	"recallref/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if code != 0 {
		os.Exit(code)
	}
}

// run parses args, listens, prints the base URL on stdout and serves until
// ctx is done (or stdin ends, with -exit-on-stdin-eof). It returns the exit
// status: 2 for bad usage, 1 for a failure.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("recallref", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address `host:port`; the host must be loopback")
	token := fs.String("token", "", "when set, every request needs \"Authorization: Bearer `T`\"")
	firstSeq := fs.Int64("first-seq", 1, "seq of the first archived block (`N` >= 1)")
	stdinEOF := fs.Bool("exit-on-stdin-eof", false, "also stop when standard input ends (the parent died)")
	noETag := fs.Bool("no-etag", false, "serve /internal/v1/recall/blocks without ETag, ignoring If-None-Match (a Go without conditional reads)")
	noSince := fs.Bool("no-since", false, "ignore ?since= on /internal/v1/recall/blocks (conditional reads without incremental ones)")
	history := fs.Int("since-history", archive.DefaultHistory, "keep the last `N` changes of the archive for ?since= deltas (0: none, every since is answered in full)")
	noDebug := fs.Bool("no-debug", false, "answer every /debug/ path with a bare 404, as a production Go does")
	var rewrites []server.Rewrite
	fs.Func("test-rewrite-output", "TEST ONLY (a Go that breaks the contract): with `OLD=NEW`, every OLD in the outputs of "+
		"/internal/v1/tool/exec becomes NEW (OLD not empty, cut at the first '='); repeatable, applied in order", func(v string) error {
		old, repl, ok := strings.Cut(v, "=")
		if !ok || old == "" {
			return errors.New("want OLD=NEW with OLD not empty")
		}
		rewrites = append(rewrites, server.Rewrite{Old: old, New: repl})
		return nil
	})
	execDelay := fs.Duration("test-exec-delay", 0, "TEST ONLY (a slow tool endpoint): /internal/v1/tool/exec waits `DURATION` (such as 40ms) before answering")
	execStatus := fs.Int("test-exec-status", 0, "TEST ONLY (a tool endpoint that is down): /internal/v1/tool/exec answers status `CODE` (200 to 599) "+
		"with a JSON error body instead of running the tool; the archive routes keep working")
	tlsCert := fs.String("tls-cert", "", "serve HTTPS with the certificate (chain) in PEM `FILE`; needs -tls-key")
	tlsKey := fs.String("tls-key", "", "the private key of -tls-cert, in PEM `FILE`")
	clientCA := fs.String("client-ca", "", "with -tls-cert: require a client certificate signed by a CA in PEM `FILE` (mutual TLS)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "recallref: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *firstSeq < 1 {
		fmt.Fprintf(stderr, "recallref: -first-seq must be >= 1, got %d\n", *firstSeq)
		return 2
	}
	tlsConfig, err := loadTLS(*tlsCert, *tlsKey, *clientCA)
	if err != nil {
		fmt.Fprintf(stderr, "recallref: %v\n", err)
		return 2
	}
	if *execDelay < 0 {
		fmt.Fprintf(stderr, "recallref: -test-exec-delay must be >= 0, got %v\n", *execDelay)
		return 2
	}
	if *execStatus != 0 && (*execStatus < 200 || *execStatus > 599) {
		fmt.Fprintf(stderr, "recallref: -test-exec-status must be a status from 200 to 599, got %d\n", *execStatus)
		return 2
	}
	if *history < 0 {
		fmt.Fprintf(stderr, "recallref: -since-history must be >= 0, got %d\n", *history)
		return 2
	}
	if err := checkLoopback(*addr); err != nil {
		fmt.Fprintf(stderr, "recallref: %v\n", err)
		return 2
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "recallref: %v\n", err)
		return 1
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
		ln = tls.NewListener(ln, tlsConfig)
	}
	store := archive.New(*firstSeq)
	store.SetHistory(*history)
	srv := &http.Server{
		ErrorLog: log.New(stderr, "recallref: ", 0),
		Handler: server.New(store, server.Options{
			Token:         *token,
			NoETag:        *noETag,
			NoSince:       *noSince,
			NoDebug:       *noDebug,
			RewriteOutput: rewrites,
			ExecDelay:     *execDelay,
			ExecStatus:    *execStatus,
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	// os.Stdout is unbuffered: the line is out once Fprintln returns.
	if _, err := fmt.Fprintln(stdout, scheme+"://"+ln.Addr().String()); err != nil {
		ln.Close()
		fmt.Fprintf(stderr, "recallref: %v\n", err)
		return 1
	}

	if *stdinEOF {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			io.Copy(io.Discard, stdin)
			cancel()
		}()
	}

	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		fmt.Fprintf(stderr, "recallref: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		fmt.Fprintf(stderr, "recallref: shutdown: %v\n", err)
		srv.Close()
	}
	<-done
	return 0
}

// checkLoopback accepts "localhost" or a loopback IP literal as the host of
// addr, and nothing else (an empty host would listen on every interface).
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("bad -addr %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("refusing non-loopback -addr %q: the host must be localhost or a loopback IP", addr)
}

// loadTLS returns the server's TLS configuration, or nil for plain HTTP when
// no file is named. With caFile, a client must present a certificate that a
// CA in it signed.
func loadTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	switch {
	case certFile == "" && keyFile == "" && caFile == "":
		return nil, nil
	case certFile == "" || keyFile == "":
		return nil, errors.New("-tls-cert and -tls-key go together (and -client-ca needs them)")
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("-tls-cert, -tls-key: %v", err)
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{pair},
		MinVersion:   tls.VersionTLS12,
		NextProtos:   []string{"http/1.1"},
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("-client-ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("-client-ca: no PEM certificate in %s", caFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
