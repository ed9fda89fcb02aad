package kafkalog

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/partfs/partfs/internal/tlsfiles"
)

// DefaultTimeout bounds every call to the cluster unless Options.Timeout is set.
const DefaultTimeout = 30 * time.Second

// Options configure a Store.
type Options struct {
	Brokers []string // seed brokers, HOST:PORT
	Timeout time.Duration

	TLS                   bool   // connect with TLS
	CAFile, CertFile, Key string // PEM files: CA to trust, client certificate and key

	SASL     string // "", "plain", "scram-sha-256" or "scram-sha-512"
	User     string
	Password string

	CacheDir     string // where sidecars live; "" = DefaultCacheDir(cluster ID)
	ShowInternal bool   // list internal topics (__consumer_offsets, ...)
	ReadOnly     bool   // every change fails with partlog.ErrReadOnly

	Logger *logrus.Entry
	Now    func() time.Time
}

func (o *Options) withDefaults() {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = logrus.NewEntry(logrus.StandardLogger())
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

// DefaultCacheDir is $XDG_CACHE_HOME/partfs/<cluster id> (~/.cache when
// unset), or /var/cache/partfs/<cluster id> for root.
func DefaultCacheDir(clusterID string) string {
	if clusterID == "" {
		clusterID = "unknown-cluster"
	}
	if os.Geteuid() == 0 {
		return filepath.Join("/var/cache/partfs", clusterID)
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "partfs", clusterID)
}

// clientOpts are the kgo options for o: seeds, TLS, SASL and timeouts.
// The client's own producer and consumer are not used.
func (o *Options) clientOpts() ([]kgo.Opt, error) {
	opts := []kgo.Opt{
		kgo.SeedBrokers(o.Brokers...),
		kgo.DialTimeout(min(o.Timeout, 10*time.Second)),
		kgo.RetryTimeout(o.Timeout),
		kgo.RequestRetries(1 << 20), // bounded by the call's context instead
		kgo.MetadataMinAge(100 * time.Millisecond),
	}
	if o.TLS || o.CAFile != "" || o.CertFile != "" {
		tc, err := o.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if o.SASL != "" {
		m, err := o.saslMechanism()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

func (o *Options) tlsConfig() (*tls.Config, error) {
	return tlsfiles.Config(tlsfiles.File{Path: o.CAFile, Flag: "--kafka-ca"},
		tlsfiles.File{Path: o.CertFile, Flag: "--kafka-cert"}, tlsfiles.File{Path: o.Key, Flag: "--kafka-key"})
}

func (o *Options) saslMechanism() (sasl.Mechanism, error) {
	if o.User == "" {
		return nil, errors.New("SASL needs a user")
	}
	switch strings.ToLower(o.SASL) {
	case "plain":
		return plain.Auth{User: o.User, Pass: o.Password}.AsMechanism(), nil
	case "scram-sha-256":
		return scram.Auth{User: o.User, Pass: o.Password}.AsSha256Mechanism(), nil
	case "scram-sha-512":
		return scram.Auth{User: o.User, Pass: o.Password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("SASL mechanism %q: want plain, scram-sha-256 or scram-sha-512", o.SASL)
}
