package logstore

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"sort"
	"strconv"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/vfs"
)

// topicsDoc is partfs-topics.json at the data directory root (Kafka
// ignores it): each topic's configuration overrides, every value a JSON
// string, and since version 2 a CRC-32C per topic entry (of the entry's
// canonical JSON, keys sorted) so that a damaged entry closes its topic
// only; an entry without one (edited by hand: delete its checksum) is taken
// as it is. Entries of topics without an opened directory are kept verbatim.
type topicsDoc struct {
	Version   int                        `json:"version"`
	Topics    map[string]json.RawMessage `json:"topics"`
	Checksums map[string]string          `json:"checksums,omitempty"`
	// Generations counts each entry's rewrites (covered by its checksum);
	// partitions record the one they ran with (see topic_gen.go). An
	// entry without one (older files) guards nothing.
	Generations map[string]uint64 `json:"generations,omitempty"`
}

const topicsFileVersion = 2

// storedTopics is what partfs-topics.json holds: every entry verbatim (the
// file is rewritten from these, so no entry is dropped), and per topic the
// overrides when the entry is sound or the reason it is not.
type storedTopics struct {
	raw       map[string]json.RawMessage
	sums      map[string]string
	gens      map[string]uint64
	overrides map[string]map[string]string
	bad       map[string]error
	damaged   error // the whole file could not be read: no topic is opened, nothing rewritten
}

var topicsCRC = crc32.MakeTable(crc32.Castagnoli)

// topicEntrySum is the checksum of an entry's canonical JSON and, when it
// has one (gen > 0), its generation.
func topicEntrySum(canonical []byte, gen uint64) string {
	sum := crc32.Checksum(canonical, topicsCRC)
	if gen > 0 {
		sum = crc32.Update(sum, topicsCRC, []byte("#"+strconv.FormatUint(gen, 10)))
	}
	return strconv.FormatUint(uint64(sum), 16)
}

// readTopicsFile reads and verifies partfs-topics.json. A missing file is
// empty; a file that is not a JSON object of topics marks the whole file
// damaged; an entry that is not an object of string values, or fails its
// checksum, marks that topic bad.
func (st *Store) readTopicsFile() *storedTopics {
	s := &storedTopics{raw: map[string]json.RawMessage{}, sums: map[string]string{},
		gens: map[string]uint64{}, overrides: map[string]map[string]string{}, bad: map[string]error{}}
	path := st.path(TopicsFile)
	data, err := vfs.ReadFile(st.fs, path)
	if isNotExist(err) {
		return s
	}
	var doc topicsDoc
	if err == nil {
		err = json.Unmarshal(data, &doc)
	}
	if err == nil && doc.Version != 1 && doc.Version != topicsFileVersion {
		err = fmt.Errorf("unknown version %d", doc.Version)
	}
	if err != nil {
		s.damaged = fmt.Errorf("%s: %w: %v", path, partlog.ErrCorrupt, err)
		return s
	}
	for name, raw := range doc.Topics {
		s.raw[name] = raw
		if sum, ok := doc.Checksums[name]; ok {
			s.sums[name] = sum
		}
		if g, ok := doc.Generations[name]; ok {
			s.gens[name] = g
		}
		kv, err := parseTopicEntry(raw, doc.Checksums[name], doc.Generations[name])
		if err != nil {
			s.bad[name] = fmt.Errorf("%s, topic %q: %w: %v", path, name, partlog.ErrCorrupt, err)
			continue
		}
		s.overrides[name] = kv
		if _, ok := doc.Checksums[name]; !ok {
			s.set(name, kv, s.gens[name]) // checksummed from the next rewrite on
		}
	}
	return s
}

// parseTopicEntry decodes one topic's entry: an object whose values are all
// JSON strings, matching its checksum when it has one (an entry without one
// was written by hand or by an older partfs).
func parseTopicEntry(raw json.RawMessage, sum string, gen uint64) (map[string]string, error) {
	var vals map[string]json.RawMessage
	if err := json.Unmarshal(raw, &vals); err != nil || vals == nil {
		return nil, fmt.Errorf("entry is not a JSON object: %s", clip(raw))
	}
	kv := make(map[string]string, len(vals))
	for k, v := range vals {
		var s string
		if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
			return nil, fmt.Errorf("key %q: value %s is not a JSON string", k, clip(v))
		}
		kv[k] = s
	}
	if sum == "" {
		return kv, nil
	}
	canonical, err := json.Marshal(kv)
	if err != nil {
		return nil, err
	}
	if got := topicEntrySum(canonical, gen); got != sum {
		return nil, fmt.Errorf("checksum %q does not match the entry's %q", sum, got)
	}
	return kv, nil
}

func clip(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// unusable says why topic name's stored entry cannot be used (nil when it
// can): the file or the entry is damaged.
func (s *storedTopics) unusable(name string) error {
	if s.damaged != nil {
		return s.damaged
	}
	return s.bad[name]
}

// set replaces topic name's entry with overrides at generation gen (0:
// none; an empty entry is removed unless it has a generation to keep).
// REQUIRES: st.mu held.
func (s *storedTopics) set(name string, overrides map[string]string, gen uint64) error {
	if len(overrides) == 0 && gen == 0 {
		delete(s.raw, name)
		delete(s.sums, name)
		delete(s.gens, name)
		return nil
	}
	if overrides == nil {
		overrides = map[string]string{}
	}
	data, err := json.Marshal(overrides)
	if err != nil {
		return err
	}
	s.raw[name] = data
	s.sums[name] = topicEntrySum(data, gen)
	if gen > 0 {
		s.gens[name] = gen
	} else {
		delete(s.gens, name)
	}
	return nil
}

// writeTopicsFile persists every entry the file holds (topics not opened,
// without a directory or with a bad entry too). REQUIRES: st.mu held.
func (st *Store) writeTopicsFile() error {
	s := st.stored
	if s.damaged != nil {
		return fmt.Errorf("not rewriting a damaged topic configuration: %w", s.damaged)
	}
	doc := topicsDoc{Version: topicsFileVersion, Topics: s.raw, Checksums: map[string]string{}, Generations: s.gens}
	names := make([]string, 0, len(s.raw))
	for name := range s.raw {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if sum, ok := s.sums[name]; ok {
			doc.Checksums[name] = sum
		}
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return vfs.WriteFileDurable(st.fs, st.path(TopicsFile), append(data, '\n'))
}
