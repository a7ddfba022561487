// Package testpki writes a throw-away public key infrastructure for tests of
// the reference behind TLS: a CA, a server certificate signed by it for
// 127.0.0.1, ::1 and localhost, a client certificate signed by it, and a
// self-signed client certificate that the CA did not sign (a stranger).
// Every key is ECDSA P-256; every certificate is valid from an hour before
// it was written for Validity.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The files Write writes: PEM certificates, and PKCS #8 PEM keys (mode 0600).
const (
	CA          = "ca.pem"
	Server      = "server.pem"
	ServerKey   = "server-key.pem"
	Client      = "client.pem"
	ClientKey   = "client-key.pem"
	Stranger    = "stranger.pem"
	StrangerKey = "stranger-key.pem"
)

// Validity is how long the certificates are valid after they were written.
const Validity = 7 * 24 * time.Hour

type issued struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// Write writes the CA, the server, client and stranger certificates and
// their keys in dir, which it creates when needed.
func Write(dir string) error {
	now := time.Now()
	ca, err := issue(dir, CA, "", now, "CA", nil, func(c *x509.Certificate) {
		c.IsCA, c.MaxPathLenZero = true, true
		c.KeyUsage |= x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	})
	if err != nil {
		return err
	}
	for _, leaf := range []struct {
		cert, key, role string
		parent          *issued
		usage           x509.ExtKeyUsage
	}{
		{Server, ServerKey, "server", ca, x509.ExtKeyUsageServerAuth},
		{Client, ClientKey, "client", ca, x509.ExtKeyUsageClientAuth},
		{Stranger, StrangerKey, "stranger", nil, x509.ExtKeyUsageClientAuth},
	} {
		if _, err := issue(dir, leaf.cert, leaf.key, now, leaf.role, leaf.parent, func(c *x509.Certificate) {
			c.ExtKeyUsage = []x509.ExtKeyUsage{leaf.usage}
			if leaf.usage == x509.ExtKeyUsageServerAuth {
				c.DNSNames = []string{"localhost"}
				c.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
			}
		}); err != nil {
			return err
		}
	}
	return nil
}

// issue creates a key and a certificate for role, set up by setup, signed by
// parent or self-signed when parent is nil, and writes the certificate to
// certFile and, unless keyFile is empty, the key to keyFile, both in dir.
func issue(dir, certFile, keyFile string, now time.Time, role string, parent *issued, setup func(*x509.Certificate)) (*issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial.Add(serial, big.NewInt(1)), // positive, at most 128 bits
		Subject:               pkix.Name{CommonName: "recallref test " + role, Organization: []string{"recallref tests"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(Validity),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	setup(tmpl)
	signer := &issued{tmpl, key}
	if parent != nil {
		signer = parent
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer.cert, &key.PublicKey, signer.key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writePEM(filepath.Join(dir, certFile), "CERTIFICATE", der, 0o644); err != nil || keyFile == "" {
		return &issued{cert, key}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err == nil {
		err = writePEM(filepath.Join(dir, keyFile), "PRIVATE KEY", keyDER, 0o600)
	}
	return &issued{cert, key}, err
}

// writePEM writes one PEM block to a new file (replacing an old one).
func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	os.Remove(path) // a new file gets mode; an old one would keep its own
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), mode)
}
