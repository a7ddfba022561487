package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	if err := Write(dir); err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(filepath.Join(dir, CA))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatal("ca.pem holds no certificate")
	}
	leaf := func(cert, key string) *x509.Certificate {
		t.Helper()
		pair, err := tls.LoadX509KeyPair(filepath.Join(dir, cert), filepath.Join(dir, key))
		if err != nil {
			t.Fatalf("%s, %s: %v", cert, key, err)
		}
		info, err := os.Stat(filepath.Join(dir, key))
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", key, info.Mode().Perm(), err)
		}
		if k, ok := pair.PrivateKey.(*ecdsa.PrivateKey); !ok || k.Curve != elliptic.P256() {
			t.Errorf("%s: key %T; want ECDSA P-256", key, pair.PrivateKey)
		}
		c, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			t.Fatalf("%s: %v", cert, err)
		}
		if day := time.Now().Add(24 * time.Hour); c.NotAfter.Before(day) || c.NotBefore.After(time.Now()) {
			t.Errorf("%s: valid from %v to %v; want now and a day on", cert, c.NotBefore, c.NotAfter)
		}
		return c
	}
	server := leaf(Server, ServerKey)
	for _, host := range []string{"127.0.0.1", "::1", "localhost"} {
		if _, err := server.Verify(x509.VerifyOptions{DNSName: host, Roots: roots}); err != nil {
			t.Errorf("server certificate for %s: %v", host, err)
		}
	}
	if _, err := server.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: roots}); err == nil {
		t.Error("the server certificate is valid for example.com")
	}
	clientUse := x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if _, err := leaf(Client, ClientKey).Verify(clientUse); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if _, err := leaf(Stranger, StrangerKey).Verify(clientUse); err == nil {
		t.Error("the CA verifies the stranger's certificate")
	}
	if _, err := server.Verify(clientUse); err == nil {
		t.Error("the server certificate is a client certificate")
	}

	// Writing again replaces every file with a new PKI.
	if err := Write(dir); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, CA)); string(again) == string(pem) {
		t.Error("a second Write kept the CA")
	}
}
