package schema

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/partfs/partfs/partlog"
)

// Source is where schemas come from: a registry (Registry) or the
// `_schemas` topic (Topic). Versions are positive; Latest is -1.
type Source interface {
	// ByID returns the schema of an ID, deleted versions' too.
	ByID(ctx context.Context, id int) (sr.Schema, error)
	// Version returns a subject's version (Latest: the newest not
	// deleted).
	Version(ctx context.Context, subject string, version int) (sr.SubjectSchema, error)
	Subjects(ctx context.Context) ([]string, error)
	// Versions lists a subject's versions, not the deleted ones.
	Versions(ctx context.Context, subject string) ([]int, error)
	// Register adds s as the subject's next version (or returns the ID
	// of the same schema already there).
	Register(ctx context.Context, subject string, s sr.Schema) (int, error)
}

// Latest asks Source.Version for a subject's newest version.
const Latest = -1

// The errors of a Source, matched with errors.Is: a missing subject,
// version or ID is ErrNotFound (partlog's, ENOENT); a schema a source
// refuses is ErrInvalid (EINVAL); a source that does not answer in time is
// ErrUnavailable (partlog.ErrTimeout, ETIMEDOUT).
var (
	ErrNotFound    = partlog.ErrNotFound
	ErrInvalid     = partlog.ErrInvalid
	ErrUnavailable = partlog.ErrTimeout
	ErrDenied      = partlog.ErrDenied
)

// Deletions is what a Source may also say: that the versions an ID
// was registered as are all deleted (the text it names).
type Deletions interface {
	DeletedID(id int) (string, bool)
}

// notFound wraps ErrNotFound with what was looked up.
func notFound(format string, a ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, a...), ErrNotFound)
}
