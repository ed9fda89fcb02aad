package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/sr"
)

// Options configure Codecs.
type Options struct {
	Source Source
	// Timeout bounds each lookup in the source (the mount's
	// --kafka-timeout); default 30 s.
	Timeout time.Duration
	Logger  *logrus.Entry
	// Failed counts a schema ID whose payloads cannot be rendered, once
	// per ID, by kind: "unknown", "invalid", "undecodable", "deleted".
	// May be nil.
	Failed func(kind string)
	// LatestTTL is how long a subject's latest version is trusted for
	// encoding before it is asked again (default 10 s).
	LatestTTL time.Duration
}

// Codecs renders and encodes wire-format payloads with the schemas of a
// Source, cached by ID. It is safe for concurrent use.
type Codecs struct {
	opt Options

	// resolved holds the entries resolved for good, copied on write:
	// a record's lookup takes no lock
	resolved atomic.Pointer[map[int]*entry]

	mu     sync.Mutex
	ids    map[int]*entry     // REQUIRES: mu held
	latest map[string]*latest // REQUIRES: mu held
}

// entry is one schema ID, resolved once: its codec, or the permanent
// failure to build one.
type entry struct {
	id      int
	done    chan struct{} // closed once resolved
	codec   *codec
	err     error  // permanent: the ID is unknown or its schema invalid
	retry   error  // the source did not answer: drop the entry, ask again
	deleted string // set when every version of the ID is deleted

	logOnce sync.Once // of a payload that does not decode
}

type codec struct {
	typ   sr.SchemaType
	avro  *avroCodec
	proto *protoCodec
	json  *jsonCodec
}

// latest is a subject's latest version as last asked.
type latest struct {
	at time.Time
	id int // 0: no such subject
}

// New returns Codecs over opt.Source.
func New(opt Options) *Codecs {
	if opt.Timeout <= 0 {
		opt.Timeout = 30 * time.Second
	}
	if opt.LatestTTL <= 0 {
		opt.LatestTTL = 10 * time.Second
	}
	if opt.Logger == nil {
		opt.Logger = logrus.NewEntry(logrus.StandardLogger())
	}
	if opt.Failed == nil {
		opt.Failed = func(string) {}
	}
	return &Codecs{opt: opt, ids: map[int]*entry{}, latest: map[string]*latest{}}
}

// Source returns the source the codecs use.
func (c *Codecs) Source() Source { return c.opt.Source }

// Timeout returns the bound of one lookup.
func (c *Codecs) Timeout() time.Duration { return c.opt.Timeout }

// header is the wire format's framing.
var header sr.ConfluentHeader

// IsWire reports whether b is in the wire format: magic byte 0 and a
// 4-byte schema ID.
func IsWire(b []byte) bool { return len(b) >= 5 && b[0] == 0 }

// maxIndexes bounds the Protobuf message indexes a payload may claim.
const maxIndexes = 64

// AppendJSON appends the JSON of the wire-format payload p to dst and
// returns its schema ID. problem says why p was not rendered (dst is then
// returned as it was), or that the ID's versions are deleted (p is then
// rendered too). err is set only when the source did not answer (it wraps
// ErrUnavailable): the caller must fail, not render.
func (c *Codecs) AppendJSON(dst, p []byte) (out []byte, id int, problem string, err error) {
	id, rest, herr := header.DecodeID(p)
	if herr != nil {
		return dst, 0, "not in the wire format", nil
	}
	e, err := c.entry(id)
	if err != nil {
		return dst, id, "", err
	}
	if e.err != nil {
		return dst, id, e.err.Error(), nil
	}
	out, derr := e.codec.appendJSON(dst, rest)
	if derr != nil {
		e.logOnce.Do(func() {
			c.opt.Logger.WithField("schema_id", id).WithError(derr).Warn("payload does not decode with its schema (logged once per schema ID)")
			c.opt.Failed("undecodable")
		})
		return dst, id, fmt.Sprintf("schema %d: %v", id, derr), nil
	}
	return out, id, e.deleted, nil
}

func (k *codec) appendJSON(dst, data []byte) ([]byte, error) {
	switch k.typ {
	case sr.TypeProtobuf:
		idx, rest, err := header.DecodeIndex(data, maxIndexes)
		if err != nil {
			return dst, fmt.Errorf("protobuf message indexes: %w", err)
		}
		return k.proto.appendJSON(dst, idx, rest)
	case sr.TypeJSON:
		return appendCompactJSON(dst, data)
	}
	return k.avro.appendJSON(dst, data)
}

// entry returns the resolved entry of id, resolving it (once, for all
// callers) if needed.
func (c *Codecs) entry(id int) (*entry, error) {
	if m := c.resolved.Load(); m != nil {
		if e, ok := (*m)[id]; ok {
			return e, nil
		}
	}
	c.mu.Lock()
	e, ok := c.ids[id]
	if !ok {
		e = &entry{id: id, done: make(chan struct{})}
		c.ids[id] = e
		c.mu.Unlock()
		c.resolve(e)
		close(e.done)
		if e.retry == nil {
			c.publish(e)
		}
	} else {
		c.mu.Unlock()
		<-e.done
	}
	if e.retry != nil {
		c.mu.Lock()
		if c.ids[id] == e {
			delete(c.ids, id)
		}
		c.mu.Unlock()
		return nil, e.retry
	}
	return e, nil
}

// publish adds e to the resolved entries.
func (c *Codecs) publish(e *entry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[int]*entry{}
	if old := c.resolved.Load(); old != nil {
		maps.Copy(m, *old)
	}
	m[e.id] = e
	c.resolved.Store(&m)
}

// resolve looks e's ID up and builds its codec.
func (c *Codecs) resolve(e *entry) {
	ctx, cancel := context.WithTimeout(context.Background(), c.opt.Timeout)
	defer cancel()
	s, err := c.opt.Source.ByID(ctx, e.id)
	if err == nil {
		e.codec, err = c.build(ctx, s)
	}
	lg := c.opt.Logger.WithField("schema_id", e.id)
	switch {
	case err == nil:
		if d, ok := c.opt.Source.(Deletions); ok {
			if which, del := d.DeletedID(e.id); del {
				e.deleted = fmt.Sprintf("schema %d: %s was deleted", e.id, which)
				lg.Warn(e.deleted + " (records written with it are still rendered)")
				c.opt.Failed("deleted")
			}
		}
	case errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded):
		e.retry = fmt.Errorf("schema %d: %w", e.id, errors.Join(err, ErrUnavailable))
		lg.WithError(err).Warn("schema source did not answer")
	case errors.Is(err, ErrNotFound):
		e.err = fmt.Errorf("schema %d not found", e.id)
		lg.WithError(err).Warn("payloads name a schema ID the source does not know (logged once per schema ID)")
		c.opt.Failed("unknown")
	default:
		e.err = fmt.Errorf("schema %d: %v", e.id, err)
		lg.WithError(err).Warn("schema cannot be used (logged once per schema ID)")
		c.opt.Failed("invalid")
	}
}

// build parses s with its references resolved.
func (c *Codecs) build(ctx context.Context, s sr.Schema) (*codec, error) {
	refs, err := c.references(ctx, s.References, map[string]bool{})
	if err != nil {
		return nil, err
	}
	return parse(s, refs)
}

// ref is a referenced schema: its name (an Avro full name, a .proto
// import, a JSON Schema URL) and text.
type ref struct{ name, text string }

// references resolves refs and theirs, deepest first.
func (c *Codecs) references(ctx context.Context, refs []sr.SchemaReference, seen map[string]bool) ([]ref, error) {
	var out []ref
	for _, r := range refs {
		key := fmt.Sprintf("%s/%d", r.Subject, r.Version)
		if seen[key] {
			continue
		}
		seen[key] = true
		ss, err := c.opt.Source.Version(ctx, r.Subject, r.Version)
		if err != nil {
			return nil, fmt.Errorf("reference %s (%s version %d): %w", r.Name, r.Subject, r.Version, err)
		}
		deeper, err := c.references(ctx, ss.References, seen)
		if err != nil {
			return nil, err
		}
		out = append(append(out, deeper...), ref{name: r.Name, text: ss.Schema.Schema})
	}
	return out, nil
}

// parse builds the codec of s's type.
func parse(s sr.Schema, refs []ref) (*codec, error) {
	named := map[string]string{}
	var texts []string
	for _, r := range refs {
		named[r.name] = r.text
		texts = append(texts, r.text)
	}
	k := &codec{typ: s.Type}
	var err error
	switch s.Type {
	case sr.TypeAvro:
		k.avro, err = parseAvro(s.Schema, texts)
	case sr.TypeProtobuf:
		k.proto, err = parseProto(s.Schema, named)
	case sr.TypeJSON:
		k.json, err = parseJSONSchema(s.Schema, named)
	default:
		err = fmt.Errorf("unknown schema type %v", s.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%v schema: %w", s.Type, err)
	}
	return k, nil
}

// Subject is the subject of a topic's keys or values (the default topic
// name strategy).
func Subject(topic string, key bool) string {
	if key {
		return topic + "-key"
	}
	return topic + "-value"
}

// Encode encodes the JSON text js with the latest schema of topic's key
// or value subject, into the wire format. ok is false when there is no
// such subject (js is then stored as it is). A value that does not fit
// the schema is an error wrapping ErrInvalid and a *FieldError naming
// the field path; a source that does not answer, ErrUnavailable.
func (c *Codecs) Encode(topic string, key bool, js []byte) (payload []byte, ok bool, err error) {
	subject := Subject(topic, key)
	id, err := c.latestID(subject)
	if err != nil || id == 0 {
		return nil, false, err
	}
	e, err := c.entry(id)
	if err != nil {
		return nil, true, err
	}
	if e.err != nil {
		return nil, true, fmt.Errorf("subject %s: %v: %w", subject, e.err, ErrInvalid)
	}
	data, idx, err := e.codec.encode(js)
	if err != nil {
		return nil, true, fmt.Errorf("subject %s (schema %d): %w: %w", subject, id, err, ErrInvalid)
	}
	out, _ := header.AppendEncode(make([]byte, 0, 6+len(data)), id, idx)
	return append(out, data...), true, nil
}

func (k *codec) encode(js []byte) ([]byte, []int, error) {
	switch k.typ {
	case sr.TypeProtobuf:
		return k.proto.encode(js)
	case sr.TypeJSON:
		b, err := k.json.encode(js)
		return b, nil, err
	}
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, nil, &FieldError{Path: "$", Reason: err.Error()}
	}
	if d.More() {
		return nil, nil, &FieldError{Path: "$", Reason: "more than one JSON value"}
	}
	b, err := k.avro.encode(v)
	return b, nil, err
}

// HasSubject reports whether topic has a key or value subject.
func (c *Codecs) HasSubject(topic string, key bool) (bool, error) {
	id, err := c.latestID(Subject(topic, key))
	return id != 0, err
}

// latestID returns the ID of subject's latest version, 0 if none, asking
// the source at most once per LatestTTL.
func (c *Codecs) latestID(subject string) (int, error) {
	now := time.Now()
	c.mu.Lock()
	l := c.latest[subject]
	c.mu.Unlock()
	if l != nil && now.Sub(l.at) < c.opt.LatestTTL {
		return l.id, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opt.Timeout)
	defer cancel()
	ss, err := c.opt.Source.Version(ctx, subject, Latest)
	switch {
	case errors.Is(err, ErrNotFound):
		ss.ID = 0
	case err != nil && l != nil:
		// the source does not answer: what it said last stands
		c.opt.Logger.WithError(err).WithField("subject", subject).Warn("latest schema version not refreshed")
		return l.id, nil
	case err != nil:
		return 0, err
	}
	l = &latest{at: now, id: ss.ID}
	c.mu.Lock()
	c.latest[subject] = l
	c.mu.Unlock()
	return l.id, nil
}

// ctx is a context bounded by the lookup timeout.
func (c *Codecs) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), c.opt.Timeout)
}

// Subjects lists the source's subjects.
func (c *Codecs) Subjects() ([]string, error) {
	ctx, cancel := c.ctx()
	defer cancel()
	return c.opt.Source.Subjects(ctx)
}

// Versions lists a subject's versions.
func (c *Codecs) Versions(subject string) ([]int, error) {
	ctx, cancel := c.ctx()
	defer cancel()
	return c.opt.Source.Versions(ctx, subject)
}

// SchemaText returns the text of a subject's version (Latest: the
// newest), as it was registered.
func (c *Codecs) SchemaText(subject string, version int) (string, error) {
	ctx, cancel := c.ctx()
	defer cancel()
	ss, err := c.opt.Source.Version(ctx, subject, version)
	return ss.Schema.Schema, err
}

// Register registers text as the next version of subject: its type is
// PROTOBUF when it is not JSON, AVRO when hamba/avro parses it, else
// JSON. A schema that does not parse is ErrInvalid; so is, on a source
// without its own checks (the `_schemas` topic), an Avro schema that
// cannot read what the latest version wrote (backward compatibility).
func (c *Codecs) Register(subject, text string) (int, error) {
	s := sr.Schema{Schema: text, Type: detectType(text)}
	if _, err := parse(s, nil); err != nil {
		return 0, fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opt.Timeout)
	defer cancel()
	if _, own := c.opt.Source.(*Topic); own && s.Type == sr.TypeAvro {
		if err := c.backward(ctx, subject, text); err != nil {
			return 0, err
		}
	}
	id, err := c.opt.Source.Register(ctx, subject, s)
	c.mu.Lock()
	delete(c.latest, subject)
	c.mu.Unlock()
	return id, err
}

// backward refuses an Avro schema that cannot read data written with the
// subject's latest version.
func (c *Codecs) backward(ctx context.Context, subject, text string) error {
	prev, err := c.opt.Source.Version(ctx, subject, Latest)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if prev.Schema.Type != sr.TypeAvro {
		return fmt.Errorf("subject %s holds %v schemas, not AVRO: %w", subject, prev.Schema.Type, ErrInvalid)
	}
	old, err1 := avro.Parse(prev.Schema.Schema)
	neu, err2 := avro.Parse(text)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	if err := avro.NewSchemaCompatibility().Compatible(neu, old); err != nil {
		return fmt.Errorf("not backward compatible with version %d of %s: %v: %w", prev.Version, subject, err, ErrInvalid)
	}
	return nil
}

func detectType(text string) sr.SchemaType {
	t := bytes.TrimSpace([]byte(text))
	if !json.Valid(t) {
		return sr.TypeProtobuf
	}
	if _, err := avro.Parse(string(t)); err == nil {
		return sr.TypeAvro
	}
	return sr.TypeJSON
}
