package schema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/record"
)

// TopicName is Schema Registry's own store, a compacted topic of one
// partition.
const TopicName = "_schemas"

// Topic is the Source of the `_schemas` topic of a store: the registry's
// records folded (the latest record of a key wins; a null value or
// "deleted": true deletes that version, whose ID stays resolvable). It
// reads what was appended since it last looked on each lookup that misses,
// so schemas registered while mounted are found.
type Topic struct {
	store partlog.Store
	now   func() int64

	mu       sync.Mutex
	log      partlog.Log            // REQUIRES: mu held; nil until the topic exists
	next     int64                  // REQUIRES: mu held; offset folded up to
	byID     map[int]sr.Schema      // REQUIRES: mu held
	subjects map[string]map[int]ver // REQUIRES: mu held
}

// ver is one version of a subject.
type ver struct {
	id      int
	deleted bool
}

// NewTopic returns the Source of store's `_schemas` topic; now gives the
// timestamps of records it appends (epoch ms).
func NewTopic(store partlog.Store, now func() int64) *Topic {
	return &Topic{store: store, now: now, byID: map[int]sr.Schema{}, subjects: map[string]map[int]ver{}}
}

// schemaKey and schemaValue are a `_schemas` record's key and value.
type schemaKey struct {
	KeyType string `json:"keytype"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
	Magic   int    `json:"magic"`
}

type schemaValue struct {
	Subject    string               `json:"subject"`
	Version    int                  `json:"version"`
	ID         int                  `json:"id"`
	Schema     string               `json:"schema"`
	SchemaType string               `json:"schemaType,omitempty"`
	References []sr.SchemaReference `json:"references,omitempty"`
	Deleted    bool                 `json:"deleted"`
}

// catchUp folds what was appended since the last look. REQUIRES: mu held.
func (t *Topic) catchUp() error {
	if t.log == nil {
		l, err := t.store.Partition(TopicName, 0)
		if errors.Is(err, partlog.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", TopicName, err)
		}
		t.log = l
	}
	// A cluster's log end may be a moment old: a schema registered just
	// before the record that names it must be found (catchUp runs only
	// for what is not folded yet, so this is a request per unknown ID).
	if r, ok := t.log.(partlog.Refresher); ok {
		if err := r.Refresh(); err != nil {
			return fmt.Errorf("%s: %w", TopicName, err)
		}
	}
	if t.log.EndOffset() <= t.next {
		return nil
	}
	next, err := partlog.ReadFrom(t.log, t.next, t.fold)
	t.next = next
	if err != nil {
		return fmt.Errorf("%s: %w", TopicName, err)
	}
	return nil
}

// fold applies one record; what is not a schema record is skipped.
func (t *Topic) fold(r *record.Record) {
	var k schemaKey
	if json.Unmarshal(r.Key, &k) != nil || k.KeyType != "SCHEMA" || k.Subject == "" {
		return
	}
	vs := t.subjects[k.Subject]
	if vs == nil {
		vs = map[int]ver{}
		t.subjects[k.Subject] = vs
	}
	if r.Value == nil {
		v := vs[k.Version]
		v.deleted = true
		vs[k.Version] = v
		return
	}
	var v schemaValue
	if json.Unmarshal(r.Value, &v) != nil || v.ID <= 0 {
		return
	}
	t.byID[v.ID] = sr.Schema{Schema: v.Schema, Type: schemaType(v.SchemaType), References: v.References}
	vs[k.Version] = ver{id: v.ID, deleted: v.Deleted}
}

func schemaType(s string) sr.SchemaType {
	var t sr.SchemaType
	if s == "" || t.UnmarshalText([]byte(s)) != nil {
		return sr.TypeAvro
	}
	return t
}

func (t *Topic) ByID(_ context.Context, id int) (sr.Schema, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.byID[id]
	if !ok {
		if err := t.catchUp(); err != nil {
			return sr.Schema{}, err
		}
		if s, ok = t.byID[id]; !ok {
			return sr.Schema{}, notFound("schema %d", id)
		}
	}
	return s, nil
}

// DeletedID says which version an ID was registered as when every
// version registered with it is deleted.
func (t *Topic) DeletedID(id int) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var which string
	for _, subj := range slices.Sorted(maps.Keys(t.subjects)) {
		for n, v := range t.subjects[subj] {
			if v.id != id {
				continue
			}
			if !v.deleted {
				return "", false
			}
			which = fmt.Sprintf("version %d of %s", n, subj)
		}
	}
	return which, which != ""
}

func (t *Topic) Version(_ context.Context, subject string, version int) (sr.SubjectSchema, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.catchUp(); err != nil {
		return sr.SubjectSchema{}, err
	}
	vs := t.live(subject)
	if len(vs) == 0 {
		return sr.SubjectSchema{}, notFound("subject %s", subject)
	}
	if version == Latest {
		version = vs[len(vs)-1]
	}
	v, ok := t.subjects[subject][version]
	if !ok || v.deleted {
		return sr.SubjectSchema{}, notFound("version %d of subject %s", version, subject)
	}
	return sr.SubjectSchema{Subject: subject, Version: version, ID: v.id, Schema: t.byID[v.id]}, nil
}

// live returns the versions of subject not deleted, ascending.
// REQUIRES: mu held.
func (t *Topic) live(subject string) []int {
	var out []int
	for n, v := range t.subjects[subject] {
		if !v.deleted {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

func (t *Topic) Subjects(context.Context) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.catchUp(); err != nil {
		return nil, err
	}
	var out []string
	for s := range t.subjects {
		if len(t.live(s)) > 0 {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out, nil
}

func (t *Topic) Versions(_ context.Context, subject string) ([]int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.catchUp(); err != nil {
		return nil, err
	}
	vs := t.live(subject)
	if len(vs) == 0 {
		return nil, notFound("subject %s", subject)
	}
	return vs, nil
}

// Register appends s as the subject's next version, with the ID the same
// schema has already (under any subject) or the next free one. Checking
// compatibility is the caller's (Codecs.Register).
func (t *Topic) Register(_ context.Context, subject string, s sr.Schema) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.catchUp(); err != nil {
		return 0, err
	}
	id, maxID := 0, 0
	for i, have := range t.byID {
		maxID = max(maxID, i)
		if sameSchema(have, s) && (id == 0 || i < id) {
			id = i
		}
	}
	version := 1
	for n, v := range t.subjects[subject] {
		if v.id == id && !v.deleted {
			return id, nil
		}
		version = max(version, n+1)
	}
	if id == 0 {
		id = maxID + 1
	}
	if err := t.ensureLog(); err != nil {
		return 0, err
	}
	key, _ := json.Marshal(schemaKey{KeyType: "SCHEMA", Subject: subject, Version: version, Magic: 1})
	typ := ""
	if s.Type != sr.TypeAvro {
		typ = s.Type.String()
	}
	val, _ := json.Marshal(schemaValue{Subject: subject, Version: version, ID: id, Schema: s.Schema, SchemaType: typ, References: s.References})
	if _, err := t.log.Append([]record.Record{{Key: key, Value: val, Timestamp: t.now()}}); err != nil {
		return 0, fmt.Errorf("register %s in %s: %w", subject, TopicName, err)
	}
	if err := t.catchUp(); err != nil {
		return 0, err
	}
	return id, nil
}

// ensureLog creates `_schemas` (compacted, as the registry makes it) when
// it does not exist. REQUIRES: mu held.
func (t *Topic) ensureLog() error {
	if t.log != nil {
		return nil
	}
	if err := t.store.CreateTopic(TopicName); err != nil && !errors.Is(err, partlog.ErrExists) {
		return fmt.Errorf("create %s: %w", TopicName, err)
	}
	if err := t.store.SetTopicConfig(TopicName, []partlog.KV{{Key: "cleanup.policy", Value: "compact"}}); err != nil {
		return fmt.Errorf("configure %s: %w", TopicName, err)
	}
	l, err := t.store.Partition(TopicName, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", TopicName, err)
	}
	t.log = l
	return nil
}

func sameSchema(a, b sr.Schema) bool {
	return a.Schema == b.Schema && a.Type == b.Type && slices.Equal(a.References, b.References)
}

func mapKeysOf[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
