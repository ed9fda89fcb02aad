package main

import (
	"flag"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/metrics"
	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/schema"
)

// schemaFlags say where schemas come from (SPEC §11).
type schemaFlags struct {
	urls, user, passFile string
	files                tlsFiles
}

func (s *schemaFlags) register(fl *flag.FlagSet) {
	fl.StringVar(&s.urls, "schema-registry", "", "decode and encode schema-encoded payloads with this Schema Registry: URL[,URL...] (default: the _schemas topic of the data directory or cluster)")
	fl.StringVar(&s.user, "schema-registry-user", "", "basic-auth user of the registry; the password comes from PARTFS_SCHEMA_REGISTRY_PASSWORD or --schema-registry-password-file")
	fl.StringVar(&s.passFile, "schema-registry-password-file", "", "file holding the registry password (first line)")
	s.files.register(fl, "schema-registry", "the registry's certificate", "")
}

// codecs returns the schema codecs of the mount: over the registry when
// one is given, else over st's _schemas topic.
func (s *schemaFlags) codecs(st partlog.Store, timeout time.Duration, mets *metrics.Metrics, lg *logrus.Entry) (*schema.Codecs, error) {
	var src schema.Source
	if s.urls == "" {
		src = schema.NewTopic(st, func() int64 { return time.Now().UnixMilli() })
	} else {
		pass, err := password(s.passFile, "schema-registry-password-file", "PARTFS_SCHEMA_REGISTRY_PASSWORD")
		if err != nil {
			return nil, err
		}
		reg, err := schema.NewRegistry(schema.RegistryOptions{
			URLs: strings.Split(s.urls, ","), User: s.user, Password: pass,
			CAFile: s.files.ca, CertFile: s.files.cert, KeyFile: s.files.key,
		})
		if err != nil {
			return nil, err
		}
		src = reg
	}
	return schema.New(schema.Options{
		Source: src, Timeout: timeout, Failed: mets.SchemaFailed,
		Logger: lg.WithField("component", "schemas"),
	}), nil
}
