// Package testpki writes a throw-away public key infrastructure for tests of
// the reference behind TLS: a CA, a server certificate signed by it for
// 127.0.0.1, ::1 and localhost, a client certificate signed by it, and a
// self-signed client certificate that the CA did not sign (a stranger).
// Every key is ECDSA P-256; every certificate is valid from an hour before
// it was written for a week.
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

// Write writes the CA, the server, client and stranger certificates and
// their keys in dir, which it creates when needed.
func Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	now := time.Now()
	var caCert *x509.Certificate
	var caKey *ecdsa.PrivateKey
	for _, c := range []struct {
		cert, key, role string
		usage           []x509.ExtKeyUsage // none for the CA
	}{
		{CA, "", "CA", nil},
		{Server, ServerKey, "server", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}},
		{Client, ClientKey, "client", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		{Stranger, StrangerKey, "stranger", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
	} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber:          serial.Add(serial, big.NewInt(1)), // positive, at most 128 bits
			Subject:               pkix.Name{CommonName: "recallref test " + c.role, Organization: []string{"recallref tests"}},
			NotBefore:             now.Add(-time.Hour),
			NotAfter:              now.Add(7 * 24 * time.Hour),
			KeyUsage:              x509.KeyUsageDigitalSignature,
			ExtKeyUsage:           c.usage,
			BasicConstraintsValid: true,
		}
		parent, signer := caCert, caKey // the CA signs the server's and the client's
		switch c.cert {
		case CA:
			tmpl.IsCA, tmpl.MaxPathLenZero = true, true
			tmpl.KeyUsage |= x509.KeyUsageCertSign | x509.KeyUsageCRLSign
		case Server:
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		}
		if c.cert == CA || c.cert == Stranger { // self-signed
			parent, signer = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
		if err != nil {
			return err
		}
		if err := writePEM(filepath.Join(dir, c.cert), "CERTIFICATE", der, 0o644); err != nil {
			return err
		}
		if c.cert == CA { // its key signs, never written
			caKey = key
			caCert, err = x509.ParseCertificate(der)
		} else if keyDER, keyErr := x509.MarshalPKCS8PrivateKey(key); keyErr != nil {
			err = keyErr
		} else {
			err = writePEM(filepath.Join(dir, c.key), "PRIVATE KEY", keyDER, 0o600)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writePEM writes one PEM block to a new file (replacing an old one).
func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	os.Remove(path) // a new file gets mode; an old one would keep its own
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), mode)
}
