// Command recallref is the Go reference instance of the recall contract
// (docs/contract.md): an in-memory archive behind the contract's HTTP API
// (package recallref/server). Its flags are listed by -h and in the README.
// It listens on loopback only, prints its base URL as the first line on
// stdout, and serves until SIGINT, SIGTERM or (-exit-on-stdin-eof) the end
// of its standard input, then shuts down and exits 0 (bad usage: 2, a failure: 1).
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
	os.Exit(code)
}

// run is the command, until ctx is done (at SIGINT or SIGTERM); it returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("recallref", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address `host:port`; the host must be loopback")
	var opts server.Options
	fs.StringVar(&opts.Token, "token", "", "when set, every request needs \"Authorization: Bearer `T`\"")
	firstSeq := fs.Int64("first-seq", 1, "seq of the first archived block (`N` >= 1)")
	stdinEOF := fs.Bool("exit-on-stdin-eof", false, "also stop when standard input ends (the parent died)")
	fs.BoolVar(&opts.NoETag, "no-etag", false, "serve /internal/v1/recall/blocks without ETag, ignoring If-None-Match (a Go without conditional reads)")
	fs.BoolVar(&opts.NoSince, "no-since", false, "ignore ?since= on /internal/v1/recall/blocks (conditional reads without incremental ones)")
	history := fs.Int("since-history", archive.DefaultHistory, "keep the last `N` changes of the archive for ?since= deltas (0: none, every since is answered in full)")
	fs.BoolVar(&opts.NoDebug, "no-debug", false, "answer every /debug/ path with a bare 404, as a production Go does")
	fs.Func("test-rewrite-output", "TEST ONLY (a Go that breaks the contract): with `OLD=NEW`, every OLD in the outputs of /internal/v1/tool/exec becomes NEW (OLD not empty, cut at the first '='); repeatable, applied in order", func(v string) error {
		old, repl, ok := strings.Cut(v, "=")
		if !ok || old == "" {
			return errors.New("want OLD=NEW with OLD not empty")
		}
		opts.RewriteOutput = append(opts.RewriteOutput, server.Rewrite{Old: old, New: repl})
		return nil
	})
	fs.DurationVar(&opts.ExecDelay, "test-exec-delay", 0, "TEST ONLY (a slow tool endpoint): /internal/v1/tool/exec waits `DURATION` (such as 40ms) before answering")
	fs.IntVar(&opts.ExecStatus, "test-exec-status", 0, "TEST ONLY (a tool endpoint that is down): /internal/v1/tool/exec answers status `CODE` (200 to 599) with a JSON error body instead of running the tool; the archive routes keep working")
	tlsCert := fs.String("tls-cert", "", "serve HTTPS with the certificate (chain) in PEM `FILE`; needs -tls-key")
	tlsKey := fs.String("tls-key", "", "the private key of -tls-cert, in PEM `FILE`")
	clientCA := fs.String("client-ca", "", "with -tls-cert: require a client certificate signed by a CA in PEM `FILE` (mutual TLS)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "recallref: "+format+"\n", a...)
		return code
	}
	tlsConfig, tlsErr := loadTLS(*tlsCert, *tlsKey, *clientCA)
	host, _, addrErr := net.SplitHostPort(*addr)
	ip := net.ParseIP(host) // with "localhost", the only hosts that listen on loopback alone
	switch {
	case fs.NArg() > 0:
		return fail(2, "unexpected arguments %q", fs.Args())
	case *firstSeq < 1:
		return fail(2, "-first-seq must be >= 1, got %d", *firstSeq)
	case tlsErr != nil:
		return fail(2, "%v", tlsErr)
	case opts.ExecDelay < 0:
		return fail(2, "-test-exec-delay must be >= 0, got %v", opts.ExecDelay)
	case opts.ExecStatus != 0 && (opts.ExecStatus < 200 || opts.ExecStatus > 599):
		return fail(2, "-test-exec-status must be a status from 200 to 599, got %d", opts.ExecStatus)
	case *history < 0:
		return fail(2, "-since-history must be >= 0, got %d", *history)
	case addrErr != nil:
		return fail(2, "bad -addr %q: %v", *addr, addrErr)
	case host != "localhost" && (ip == nil || !ip.IsLoopback()):
		return fail(2, "refusing non-loopback -addr %q: the host must be localhost or a loopback IP", *addr)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fail(1, "%v", err)
	}
	scheme := "http"
	if tlsConfig != nil {
		scheme = "https"
		ln = tls.NewListener(ln, tlsConfig)
	}
	store := archive.New(*firstSeq)
	store.SetHistory(*history)
	srv := &http.Server{
		ErrorLog:          log.New(stderr, "recallref: ", 0),
		Handler:           server.New(store, opts),
		ReadHeaderTimeout: 10 * time.Second,
	}
	// os.Stdout is unbuffered: the line is out once Fprintln returns.
	if _, err := fmt.Fprintln(stdout, scheme+"://"+ln.Addr().String()); err != nil {
		ln.Close()
		return fail(1, "%v", err)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if *stdinEOF {
		go func() { io.Copy(io.Discard, stdin); cancel() }()
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fail(1, "%v", err)
	case <-ctx.Done():
	}
	grace, stopGrace := context.WithTimeout(context.Background(), 5*time.Second)
	defer stopGrace()
	if err := srv.Shutdown(grace); err != nil {
		fail(0, "shutdown: %v", err)
		srv.Close()
	}
	<-done
	return 0
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
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	if caFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("-client-ca: %v", err)
	}
	cfg.ClientCAs = x509.NewCertPool()
	if !cfg.ClientCAs.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("-client-ca: no PEM certificate in %s", caFile)
	}
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	return cfg, nil
}
