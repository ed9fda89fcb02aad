package testutil

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka starts franz-go's in-process cluster (kfake) on loopback ports for
// the test and closes it when the test ends. By default it has one broker
// and a created topic gets one partition; opts come after those defaults,
// so they can change them (kfake.NumBrokers(3), kfake.EnableSASL(), ...).
// Its bootstrap address is strings.Join(c.ListenAddrs(), ",").
func Kafka(t testing.TB, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	all := append([]kfake.Opt{kfake.NumBrokers(1), kfake.DefaultNumPartitions(1)}, opts...)
	c, err := kfake.NewCluster(all...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// Kcat returns the path of kcat (librdkafka's command-line client, which
// test.sh installs). Where it is missing the test is skipped, unless CI is
// set: under CI a test that needs kcat must run.
func Kcat(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"kcat", "kafkacat"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("kcat is not installed (test.sh installs it with apt-get)")
	}
	t.Skip("kcat is not installed")
	return ""
}

// RunKcat runs kcat with args and stdin (within 60 s) and returns its
// stdout; it fails the test on a non-zero exit, with kcat's stderr.
func RunKcat(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Kcat(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// KafkaTLS returns the kfake option of a TLS listener for 127.0.0.1, with
// a certificate signed by a CA made for the test, and the CA's PEM file.
func KafkaTLS(t testing.TB) (kfake.Opt, string) {
	t.Helper()
	caCert, caKey := newCert(t, nil, nil, &x509.Certificate{IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, Subject: pkix.Name{CommonName: "partfs test CA"}})
	leaf, key := newCert(t, caCert, caKey, &x509.Certificate{Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caCert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key}
	return kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}), file
}

// newCert makes a certificate of tmpl with a new key, signed by parent
// (self-signed when nil), valid for a day.
func newCert(t testing.TB, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, tmpl *x509.Certificate) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(time.Now().UnixNano())
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

// KafkaTxnLayout produces partlogtest.TxnLayout into txn-0 of c with
// franz-go's own producers: values v0 v1 plainly, v2 v3 in an aborted
// transaction, v5 v6 in a committed one (each transaction ends with a
// marker), then v8.
func KafkaTxnLayout(t testing.TB, c *kfake.Cluster) {
	t.Helper()
	ctx := context.Background()
	base := []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic("txn")}
	plain, err := kgo.NewClient(base...)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := kadm.NewClient(plain).CreateTopic(ctx, 1, 1, nil, "txn"); err != nil {
		t.Fatal(err)
	}
	produce := func(cl *kgo.Client, offs ...int) {
		for _, o := range offs {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint("v", o))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	txn := func(id string, offs []int, commit kgo.TransactionEndTry) {
		cl, err := kgo.NewClient(append(base, kgo.TransactionalID(id))...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		produce(cl, offs...)
		if err := cl.EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
	produce(plain, 0, 1)
	txn("a", []int{2, 3}, kgo.TryAbort)
	txn("b", []int{5, 6}, kgo.TryCommit)
	produce(plain, 8)
}
