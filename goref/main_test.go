package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"recallref/internal/testpki"
)

// TestMain runs main itself when re-executed by TestSignal.
func TestMain(m *testing.M) {
	if os.Getenv("RECALLREF_RUN_MAIN") == "1" {
		os.Args = append([]string{"recallref"}, strings.Fields(os.Getenv("RECALLREF_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRunLoopbackOnly checks that -addr takes "localhost" or a loopback IP
// literal as its host, and nothing else (an empty host would listen on every
// interface): a refused address is bad usage (2), an accepted one is served
// (0) or, when it cannot listen, a failure (1).
func TestRunLoopbackOnly(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"127.0.0.1:8080", true},
		{"127.1.2.3:0", true},
		{"[::1]:0", true},
		{"localhost:0", true},
		{"0.0.0.0:0", false},
		{":0", false},
		{"[::]:0", false},
		{"192.168.1.1:0", false},
		{"example.com:0", false},
		{"127.0.0.1", false},
		{"", false},
	}
	done, cancel := context.WithCancel(context.Background())
	cancel() // an accepted address is served until ctx is done: at once
	for _, tt := range tests {
		var stderr strings.Builder
		code := run(done, []string{"-addr", tt.addr}, strings.NewReader(""), io.Discard, &stderr)
		if (code != 2) != tt.ok {
			t.Errorf("-addr %q: exit %d (%s); want accepted %v", tt.addr, code, stderr.String(), tt.ok)
		}
		if !tt.ok && !strings.Contains(stderr.String(), "-addr") {
			t.Errorf("-addr %q: stderr %q does not name -addr", tt.addr, stderr.String())
		}
	}
}

func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-addr", "0.0.0.0:0"},
		{"-addr", ":8080"},
		{"-first-seq", "0"},
		{"-first-seq", "-5"},
		{"-first-seq", "x"},
		{"-nope"},
		{"extra"},
		{"-test-exec-delay", "-1ms"},
		{"-test-exec-delay", "40"},
		{"-test-exec-status", "199"},
		{"-test-exec-status", "600"},
		{"-test-exec-status", "x"},
		{"-test-rewrite-output", "nothing"},
		{"-test-rewrite-output", "=new"},
		{"-test-rewrite-output", ""},
		{"-since-history", "-1"},
		{"-since-history", "x"},
	} {
		var stdout, stderr strings.Builder
		if code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 2 {
			t.Errorf("run(%q) = %d; want 2", args, code)
		}
		if stdout.Len() != 0 || stderr.Len() == 0 {
			t.Errorf("run(%q): stdout %q, stderr %q; want only an error on stderr", args, stdout.String(), stderr.String())
		}
	}
}

func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"-first-seq", "42", "-token", "tk"}, strings.NewReader(""), pw, io.Discard)
		pw.Close()
	}()
	url, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	url = strings.TrimSuffix(url, "\n")
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line %q is not a loopback base URL", url)
	}

	req, _ := http.NewRequest("POST", url+"/internal/v1/recall/archive", strings.NewReader(`{"label":"l","content":"c"}`))
	req.Header.Set("Authorization", "Bearer tk")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"id":"r42","seq":42}` {
		t.Errorf("archive: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(url + "/internal/v1/recall/blocks")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("no token: %d; want 401", resp.StatusCode)
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("run returned %d after cancel; want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after cancel")
	}
}

func TestExitOnStdinEOF(t *testing.T) {
	in, closeIn := io.Pipe()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"-exit-on-stdin-eof"}, in, pw, io.Discard)
		pw.Close()
	}()
	if _, err := bufio.NewReader(pr).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	select {
	case code := <-done:
		t.Fatalf("run returned %d before stdin ended", code)
	case <-time.After(100 * time.Millisecond):
	}
	closeIn.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("run returned %d after stdin ended; want 0", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after stdin ended")
	}
}

// TestSignal runs main in a child process and stops it with SIGTERM: it must
// print the URL first and exit 0 (so a -cover build writes its counters).
func TestSignal(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "RECALLREF_RUN_MAIN=1", "RECALLREF_ARGS=-addr 127.0.0.1:0 -first-seq 3")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://127.0.0.1:") {
		cmd.Process.Kill()
		t.Fatalf("first line %q, %v", line, err)
	}
	resp, err := http.Get(strings.TrimSpace(line) + "/internal/v1/recall/blocks")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v; want exit 0", err)
	}
}

// TestRunOptions checks that each flag reaches the server.
func TestRunOptions(t *testing.T) {
	status := func(t *testing.T, url, path string) (int, http.Header) {
		t.Helper()
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header
	}
	exec := func(t *testing.T, url string) (int, string) {
		t.Helper()
		resp, err := http.Post(url+"/internal/v1/tool/exec", "application/json", strings.NewReader(`{"name":"recall","args":"{}"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	// sinceAnswer archives n blocks after a read, then reads ?since= the
	// read's tag: true for a delta, false for a full body.
	sinceAnswer := func(t *testing.T, url string, n int) bool {
		t.Helper()
		_, h := status(t, url, "/internal/v1/recall/blocks")
		for i := 0; i < n; i++ {
			resp, err := http.Post(url+"/internal/v1/recall/archive", "application/json", strings.NewReader(`{"label":"a","content":"b"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		resp, err := http.Get(url + "/internal/v1/recall/blocks?since=" + neturl.QueryEscape(h.Get("ETag")))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(body), `"since"`)
	}
	for _, tc := range []struct {
		args  []string
		check func(t *testing.T, url string)
	}{
		{nil, func(t *testing.T, url string) {
			if code, h := status(t, url, "/internal/v1/recall/blocks"); code != 200 || h.Get("ETag") == "" {
				t.Errorf("blocks: %d, ETag %q; want 200 with a tag", code, h.Get("ETag"))
			}
			if code, _ := status(t, url, "/debug/version"); code != 200 {
				t.Errorf("debug: %d; want 200", code)
			}
			if !sinceAnswer(t, url, 1) {
				t.Error("since: a full body; want a delta")
			}
		}},
		{[]string{"-no-since"}, func(t *testing.T, url string) {
			if sinceAnswer(t, url, 1) {
				t.Error("since: a delta; want a full body")
			}
		}},
		{[]string{"-since-history", "2"}, func(t *testing.T, url string) {
			if !sinceAnswer(t, url, 2) || sinceAnswer(t, url, 3) {
				t.Error("since: want a delta for 2 changes, a full body for 3")
			}
		}},
		{[]string{"-since-history", "0"}, func(t *testing.T, url string) {
			if sinceAnswer(t, url, 1) {
				t.Error("since: a delta; want a full body")
			}
		}},
		{[]string{"-no-etag"}, func(t *testing.T, url string) {
			if code, h := status(t, url, "/internal/v1/recall/blocks"); code != 200 || h.Get("ETag") != "" {
				t.Errorf("blocks: %d, ETag %q; want 200 without a tag", code, h.Get("ETag"))
			}
		}},
		{[]string{"-no-debug"}, func(t *testing.T, url string) {
			if code, _ := status(t, url, "/debug/version"); code != 404 {
				t.Errorf("debug: %d; want 404", code)
			}
		}},
		{[]string{"-test-exec-status", "502"}, func(t *testing.T, url string) {
			if code, body := exec(t, url); code != 502 || !strings.Contains(body, `"error"`) {
				t.Errorf("exec: %d %s; want 502 with an error", code, body)
			}
		}},
		{[]string{"-test-rewrite-output", "needs=lacks=", "-test-rewrite-output", "lacks==x", "-test-exec-delay", "1ms"}, func(t *testing.T, url string) {
			if code, body := exec(t, url); code != 200 || body != `{"output":"recall =x= an \"id\", such as \"r7\""}`+"\n" {
				t.Errorf("exec: %d %s; want the output rewritten", code, body)
			}
		}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			url, stop := startRun(t, tc.args...)
			defer stop()
			tc.check(t, url)
		})
	}
}

// startRun runs run with args in the background; its base URL, and a
// function that stops it and checks that it exited 0.
func startRun(t *testing.T, args ...string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, args, strings.NewReader(""), pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("run(%q): no first line: %v", args, err)
	}
	go io.Copy(io.Discard, pr)
	stop := func() {
		t.Helper()
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("run(%q) returned %d after cancel; want 0", args, code)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("run(%q) did not return after cancel", args)
		}
	}
	return strings.TrimSuffix(line, "\n"), stop
}

func TestRunTLS(t *testing.T) {
	dir := t.TempDir()
	if err := testpki.Write(dir); err != nil {
		t.Fatal(err)
	}
	file := func(name string) string { return filepath.Join(dir, name) }
	roots := x509.NewCertPool()
	pem, _ := os.ReadFile(file(testpki.CA))
	roots.AppendCertsFromPEM(pem)
	// config presents the pair cert, key (none when empty).
	config := func(cert, key string) *tls.Config {
		cfg := &tls.Config{RootCAs: roots}
		if cert != "" {
			pair, err := tls.LoadX509KeyPair(file(cert), file(key))
			if err != nil {
				t.Fatal(err)
			}
			// Sent whatever CAs the server names, as OpenSSL clients do.
			cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
		}
		return cfg
	}
	// refusal is the error of a connection presenting cert, key that reads
	// before it writes: with TLS 1.3 the server checks the client's
	// certificate after the client's handshake ends, and a request written
	// meanwhile could meet a reset instead of the server's alert.
	refusal := func(url, cert, key string) error {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(url, "https://"), config(cert, key))
		if err != nil {
			return err
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		return err
	}
	// get reads /blocks presenting the pair cert, key (none when empty).
	get := func(url, cert, key string) (*http.Response, error) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: config(cert, key)}, Timeout: 10 * time.Second}
		defer c.CloseIdleConnections()
		resp, err := c.Get(url + "/internal/v1/recall/blocks")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}

	url, stop := startRun(t, "-tls-cert", file(testpki.Server), "-tls-key", file(testpki.ServerKey))
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Errorf("first line %q; want an https loopback URL", url)
	}
	if resp, err := get(url, "", ""); err != nil || resp.StatusCode != 200 {
		t.Errorf("TLS without client certificate: %v", err)
	}
	if _, err := http.Get(url + "/internal/v1/recall/blocks"); err == nil {
		t.Error("a client that does not trust the CA was served")
	}
	if resp, err := http.Get("http" + strings.TrimPrefix(url, "https") + "/internal/v1/recall/blocks"); err != nil || resp.StatusCode != 400 {
		t.Errorf("plain HTTP to the TLS port: %v; want net/http's 400", err)
	} else {
		resp.Body.Close()
	}
	stop()

	url, stop = startRun(t, "-tls-cert", file(testpki.Server), "-tls-key", file(testpki.ServerKey), "-client-ca", file(testpki.CA))
	defer stop()
	if resp, err := get(url, testpki.Client, testpki.ClientKey); err != nil || resp.StatusCode != 200 {
		t.Errorf("mutual TLS with the client certificate: %v", err)
	}
	if err := refusal(url, "", ""); err == nil || !strings.Contains(err.Error(), "certificate required") {
		t.Errorf("mutual TLS without a client certificate: %v; want the server's refusal", err)
	}
	if err := refusal(url, testpki.Stranger, testpki.StrangerKey); err == nil || !strings.Contains(err.Error(), "unknown certificate authority") {
		t.Errorf("mutual TLS with the stranger's certificate: %v; want the server's refusal", err)
	}
}

func TestRunTLSUsage(t *testing.T) {
	dir := t.TempDir()
	if err := testpki.Write(dir); err != nil {
		t.Fatal(err)
	}
	cert, key, ca := filepath.Join(dir, testpki.Server), filepath.Join(dir, testpki.ServerKey), filepath.Join(dir, testpki.CA)
	for _, args := range [][]string{
		{"-tls-cert", cert},
		{"-tls-key", key},
		{"-client-ca", ca},
		{"-tls-key", key, "-client-ca", ca},
		{"-tls-cert", cert, "-tls-key", filepath.Join(dir, testpki.ClientKey)}, // not its key
		{"-tls-cert", cert, "-tls-key", filepath.Join(dir, "missing.pem")},
		{"-tls-cert", cert, "-tls-key", key, "-client-ca", filepath.Join(dir, "missing.pem")},
		{"-tls-cert", cert, "-tls-key", key, "-client-ca", key}, // no certificate in it
	} {
		var stdout, stderr strings.Builder
		if code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 2 {
			t.Errorf("run(%q) = %d; want 2", args, code)
		}
		if stdout.Len() != 0 || stderr.Len() == 0 {
			t.Errorf("run(%q): stdout %q, stderr %q; want only an error on stderr", args, stdout.String(), stderr.String())
		}
	}
}
