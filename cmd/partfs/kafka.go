package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/kafkalog"
)

// kafkaFlags are the mount flags of a Kafka cluster (docs/spec.md §9).
type kafkaFlags struct {
	brokers              string
	tls                  bool
	files                tlsFiles
	sasl, user, passFile string
	timeout              time.Duration
	cacheDir             string
	showInternal         bool
}

func (k *kafkaFlags) register(fl *flag.FlagSet) {
	fl.StringVar(&k.brokers, "kafka", "", "serve this Kafka cluster instead of a data directory: HOST:PORT[,HOST:PORT...]")
	fl.BoolVar(&k.tls, "kafka-tls", false, "connect to the brokers with TLS")
	k.files.register(fl, "kafka", "the brokers' certificates", "--kafka-tls")
	fl.StringVar(&k.sasl, "kafka-sasl", "", "SASL mechanism: plain, scram-sha-256 or scram-sha-512 (with --kafka-user)")
	fl.StringVar(&k.user, "kafka-user", "", "SASL user; the password comes from PARTFS_KAFKA_PASSWORD or --kafka-password-file")
	fl.StringVar(&k.passFile, "kafka-password-file", "", "file holding the SASL password (first line)")
	fl.DurationVar(&k.timeout, "kafka-timeout", kafkalog.DefaultTimeout, "fail a request the cluster does not answer in this time with ETIMEDOUT")
	fl.StringVar(&k.cacheDir, "cache-dir", "", "where positions are kept across mounts (default $XDG_CACHE_HOME/partfs/<cluster id>, /var/cache/partfs/<cluster id> for root)")
	fl.BoolVar(&k.showInternal, "show-internal", false, "list the cluster's internal topics (__consumer_offsets, ...)")
}

// tlsFiles are the PEM files of a TLS client: --PREFIX-ca, --PREFIX-cert
// and --PREFIX-key.
type tlsFiles struct{ ca, cert, key string }

// register declares the three flags; signs says what the CA signs, implies
// names the flag a file implies ("" for none).
func (f *tlsFiles) register(fl *flag.FlagSet, prefix, signs, implies string) {
	caNote, certNote := "", ""
	if implies != "" {
		caNote, certNote = " (implies "+implies+")", "; implies "+implies
	}
	fl.StringVar(&f.ca, prefix+"-ca", "", "PEM file of the CA that signs "+signs+caNote)
	fl.StringVar(&f.cert, prefix+"-cert", "", "PEM file of the client certificate (with --"+prefix+"-key"+certNote+")")
	fl.StringVar(&f.key, prefix+"-key", "", "PEM file of the client certificate's key")
}

// password reads a password: the first line of file (given by the flag
// named flagName), else the environment variable env. It is never taken
// from the command line.
func password(file, flagName, env string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("--%s: %w", flagName, err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		return strings.TrimSuffix(line, "\r"), nil
	}
	return os.Getenv(env), nil
}

// openKafka connects to the cluster of the mount flags.
func openKafka(mf *mountFlags, lg *logrus.Entry) (*kafkalog.Store, error) {
	k := &mf.kafka
	if k.sasl != "" && k.user == "" {
		return nil, errors.New("--kafka-sasl needs --kafka-user")
	}
	pass, err := password(k.passFile, "kafka-password-file", "PARTFS_KAFKA_PASSWORD")
	if err != nil {
		return nil, err
	}
	st, err := kafkalog.Open(kafkalog.Options{
		Brokers: strings.Split(k.brokers, ","), Timeout: k.timeout,
		TLS: k.tls, CAFile: k.files.ca, CertFile: k.files.cert, Key: k.files.key,
		SASL: k.sasl, User: k.user, Password: pass,
		CacheDir: k.cacheDir, ShowInternal: k.showInternal, ReadOnly: mf.readOnly,
		Logger: lg,
	})
	if err != nil {
		return nil, err
	}
	lg.WithFields(logrus.Fields{"brokers": k.brokers, "cluster_id": st.ClusterID(), "cache_dir": st.CacheDir()}).Info("connected to the Kafka cluster")
	return st, nil
}
