// Package tlsfiles makes the TLS configuration of a client from PEM
// files: a CA that verifies the server, and a client certificate with its
// key. Its errors name each file by the flag that gave it.
package tlsfiles

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// File is a PEM file and the flag that named it ("" for none).
type File struct{ Path, Flag string }

// Config returns a TLS 1.2+ client configuration that trusts the CA of ca
// (the system's CAs when ca.Path is empty) and presents the certificate
// of cert with the key of key (none when both are empty; one without the
// other is an error).
func Config(ca, cert, key File) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca.Path != "" {
		pem, err := os.ReadFile(ca.Path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ca.Flag, err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s %s: no PEM certificate", ca.Flag, ca.Path)
		}
	}
	if (cert.Path == "") != (key.Path == "") {
		return nil, errors.New(cert.Flag + " and " + key.Flag + " go together")
	}
	if cert.Path != "" {
		pair, err := tls.LoadX509KeyPair(cert.Path, key.Path)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", cert.Flag, key.Flag, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}
