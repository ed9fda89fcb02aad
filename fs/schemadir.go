package fs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/partfs/partfs/partlog"
)

// schemasName is the directory of the schema subjects (SPEC §11).
const schemasName = ".schemas"

// SchemaCatalog is what .schemas/ shows and takes; schema.Codecs
// implements it. Version -1 is the latest.
type SchemaCatalog interface {
	Subjects() ([]string, error)
	Versions(subject string) ([]int, error)
	SchemaText(subject string, version int) (string, error)
	Register(subject, text string) (id int, err error)
}

// catalog returns the mount's schema catalog, nil if none.
func (f *FS) catalog() SchemaCatalog {
	c, _ := f.opt.Schemas.(SchemaCatalog)
	return c
}

// schemasDir lists the subjects; any subject name resolves, so that
// SUBJECT/new can register a subject's first version.
type schemasDir struct {
	dir
	c SchemaCatalog
}

func (d *schemasDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	subjects, err := d.c.Subjects()
	if err != nil {
		return nil, fail(d.fsys.lg.WithField("file", schemasName), "readdir", err)
	}
	ents := make([]fuse.DirEntry, 0, len(subjects))
	for _, s := range subjects {
		if groupFileName(s) {
			ents = append(ents, fuse.DirEntry{Name: s, Mode: syscall.S_IFDIR})
		}
	}
	return gofs.NewListDirStream(ents), 0
}

func (d *schemasDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return child(ctx, d.EmbeddedInode(), name, syscall.S_IFDIR, out, func() gofs.InodeEmbedder {
		return &subjectDir{dir: dir{fsys: d.fsys}, c: d.c, subject: name}
	}), 0
}

// subjectDir holds a subject's versions, latest, and new (write a schema
// to register it).
type subjectDir struct {
	dir
	c       SchemaCatalog
	subject string
}

const newSchemaName = "new"

func (d *subjectDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	ents := []fuse.DirEntry{{Name: newSchemaName, Mode: syscall.S_IFREG}}
	versions, err := d.c.Versions(d.subject)
	if err != nil && !isNotFound(err) {
		return nil, fail(d.fsys.lg.WithField("subject", d.subject), "readdir", err)
	}
	if len(versions) > 0 {
		ents = append(ents, fuse.DirEntry{Name: "latest", Mode: syscall.S_IFREG})
	}
	for _, v := range versions {
		ents = append(ents, fuse.DirEntry{Name: strconv.Itoa(v), Mode: syscall.S_IFREG})
	}
	return gofs.NewListDirStream(ents), 0
}

func (d *subjectDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	lg := d.fsys.lg.WithField("file", schemasName+"/"+d.subject+"/"+name)
	if name == newSchemaName {
		return child(ctx, d.EmbeddedInode(), name, syscall.S_IFREG, out, func() gofs.InodeEmbedder {
			return &contentNode{fsys: d.fsys, lg: lg, whole: true,
				gen: func() ([]byte, error) { return nil, nil },
				apply: func(text []byte) error {
					id, err := d.c.Register(d.subject, strings.TrimSpace(string(text)))
					if err == nil {
						lg.WithField("id", id).Info("schema registered")
					}
					return err
				}}
		}), 0
	}
	version := -1
	if name != "latest" {
		v, err := strconv.Atoi(name)
		if err != nil || v <= 0 || strconv.Itoa(v) != name {
			return nil, syscall.ENOENT
		}
		version = v
	}
	if _, err := d.c.SchemaText(d.subject, version); err != nil {
		return nil, toErrno(err)
	}
	return child(ctx, d.EmbeddedInode(), name, syscall.S_IFREG, out, func() gofs.InodeEmbedder {
		return &contentNode{fsys: d.fsys, lg: lg, gen: func() ([]byte, error) {
			text, err := d.c.SchemaText(d.subject, version)
			if err != nil {
				return nil, fmt.Errorf("%s version %s: %w", d.subject, name, err)
			}
			if len(text) > 0 && text[len(text)-1] != '\n' {
				text += "\n"
			}
			return []byte(text), nil
		}}
	}), 0
}

func isNotFound(err error) bool { return errors.Is(err, partlog.ErrNotFound) }
