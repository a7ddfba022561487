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

// Write writes the CA, the server, client and stranger certificates and
// their keys in dir, which it creates when needed.
func Write(dir string) error {
	return write(dir, time.Now())
}

type issued struct {
	cert *x509.Certificate
	der  []byte
	key  *ecdsa.PrivateKey
}

func write(dir string, now time.Time) error {
	base := func(cn string) *x509.Certificate {
		return &x509.Certificate{
			Subject:               pkix.Name{CommonName: cn, Organization: []string{"recallref tests"}},
			NotBefore:             now.Add(-time.Hour),
			NotAfter:              now.Add(Validity),
			KeyUsage:              x509.KeyUsageDigitalSignature,
			BasicConstraintsValid: true,
		}
	}
	caTmpl := base("recallref test CA")
	caTmpl.IsCA = true
	caTmpl.MaxPathLenZero = true
	caTmpl.KeyUsage |= x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	ca, err := issue(caTmpl, nil)
	if err != nil {
		return err
	}
	serverTmpl := base("recallref test server")
	serverTmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	serverTmpl.DNSNames = []string{"localhost"}
	serverTmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	server, err := issue(serverTmpl, ca)
	if err != nil {
		return err
	}
	clientTmpl := base("recallref test client")
	clientTmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	client, err := issue(clientTmpl, ca)
	if err != nil {
		return err
	}
	strangerTmpl := base("recallref test stranger")
	strangerTmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	stranger, err := issue(strangerTmpl, nil)
	if err != nil {
		return err
	}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		c    *issued
	}{{CA, ca}, {Server, server}, {Client, client}, {Stranger, stranger}} {
		if err := writePEM(filepath.Join(dir, f.name), "CERTIFICATE", f.c.der, 0o644); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		name string
		c    *issued
	}{{ServerKey, server}, {ClientKey, client}, {StrangerKey, stranger}} {
		der, err := x509.MarshalPKCS8PrivateKey(f.c.key)
		if err != nil {
			return err
		}
		if err := writePEM(filepath.Join(dir, f.name), "PRIVATE KEY", der, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// issue creates a key and a certificate from tmpl, signed by parent, or
// self-signed when parent is nil.
func issue(tmpl *x509.Certificate, parent *issued) (*issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial.Add(serial, big.NewInt(1)) // positive, at most 128 bits
	signer, signerKey := tmpl, key
	if parent != nil {
		signer, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signer, &key.PublicKey, signerKey)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &issued{cert, der, key}, nil
}

// writePEM writes one PEM block to a new file (replacing an old one).
func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	os.Remove(path) // a new file gets mode; an old one would keep its own
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), mode)
}
