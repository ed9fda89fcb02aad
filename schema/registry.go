package schema

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/partfs/partfs/internal/tlsfiles"
)

// RegistryOptions say how to reach a Schema Registry.
type RegistryOptions struct {
	URLs           []string
	User, Password string // basic auth when User is set
	// TLS: CAFile (PEM) verifies the registry's certificate, CertFile and
	// KeyFile are a client certificate; none set: the system's defaults
	// for https URLs.
	CAFile, CertFile, KeyFile string
}

func (o *RegistryOptions) tlsConfig() (*tls.Config, error) {
	if o.CAFile == "" && o.CertFile == "" && o.KeyFile == "" {
		return nil, nil
	}
	return tlsfiles.Config(tlsfiles.File{Path: o.CAFile, Flag: "--schema-registry-ca"},
		tlsfiles.File{Path: o.CertFile, Flag: "--schema-registry-cert"}, tlsfiles.File{Path: o.KeyFile, Flag: "--schema-registry-key"})
}

// Registry is the Source of a Schema Registry's REST API (franz-go's sr
// client).
type Registry struct{ cl *sr.Client }

// NewRegistry returns the Source of the registry opt names.
func NewRegistry(opt RegistryOptions) (*Registry, error) {
	opts := []sr.ClientOpt{sr.URLs(opt.URLs...), sr.UserAgent("partfs")}
	if opt.User != "" {
		opts = append(opts, sr.BasicAuth(opt.User, opt.Password))
	}
	tc, err := opt.tlsConfig()
	if err != nil {
		return nil, fmt.Errorf("schema registry TLS: %w", err)
	}
	if tc != nil {
		opts = append(opts, sr.HTTPClient(&http.Client{Transport: &http.Transport{TLSClientConfig: tc}}))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("schema registry: %w", err)
	}
	return &Registry{cl: cl}, nil
}

// registryErr maps the registry's answer to the package's errors: its
// "not found" codes to ErrNotFound, a refused schema to ErrInvalid, no
// answer (or a server error) to ErrUnavailable.
func registryErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var re *sr.ResponseError
	if errors.As(err, &re) {
		switch {
		case re.StatusCode == http.StatusNotFound:
			return fmt.Errorf("schema registry: %s: %s: %w", op, re.Message, ErrNotFound)
		case re.StatusCode == http.StatusConflict || re.StatusCode == http.StatusUnprocessableEntity:
			return fmt.Errorf("schema registry: %s: %s: %w", op, re.Message, ErrInvalid)
		case re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusForbidden:
			return fmt.Errorf("schema registry: %s: %s: %w", op, re.Message, ErrDenied)
		}
	}
	return fmt.Errorf("schema registry: %s: %v: %w", op, err, ErrUnavailable)
}

func (r *Registry) ByID(ctx context.Context, id int) (sr.Schema, error) {
	s, err := r.cl.SchemaByID(ctx, id)
	return s, registryErr(fmt.Sprintf("schema %d", id), err)
}

func (r *Registry) Version(ctx context.Context, subject string, version int) (sr.SubjectSchema, error) {
	s, err := r.cl.SchemaByVersion(ctx, subject, version)
	return s, registryErr(fmt.Sprintf("subject %s version %d", subject, version), err)
}

func (r *Registry) Subjects(ctx context.Context) ([]string, error) {
	s, err := r.cl.Subjects(ctx)
	return s, registryErr("subjects", err)
}

func (r *Registry) Versions(ctx context.Context, subject string) ([]int, error) {
	v, err := r.cl.SubjectVersions(ctx, subject)
	return v, registryErr("versions of "+subject, err)
}

func (r *Registry) Register(ctx context.Context, subject string, s sr.Schema) (int, error) {
	ss, err := r.cl.CreateSchema(ctx, subject, s)
	return ss.ID, registryErr("register "+subject, err)
}
