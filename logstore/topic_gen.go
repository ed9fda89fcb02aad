package logstore

// A topic's entry in partfs-topics.json carries a generation, raised on
// every rewrite of that entry, and each partition records in its segments
// sidecar (under the sidecar's CRC-32C) the generation it ran with. The
// topics file is derived: when it is missing, or an older copy of it was
// put back, a partition finds its topic's entry missing or at a lower
// generation than it recorded, and the settings it would apply are not the
// ones it ran with (a lost retention.ms=-1 would fall back to 7 days). Such
// a partition opens with retention by time and size suspended, nothing
// deleted by it, until the topic's configuration is written again. A
// sidecar or entry without a generation (older files) guards nothing.

// guardTopicGen compares the generation recorded in the sidecar with the
// topic's stored entry and suspends retention when the entry is missing or
// older. Called while the partition is loaded (no other user yet).
func (l *Log) guardTopicGen(recorded uint64) {
	if recorded == 0 || l.store == nil {
		return
	}
	stored, ok := l.store.stored.gens[l.topic]
	_, hasEntry := l.store.stored.raw[l.topic]
	if hasEntry && ok && stored >= recorded {
		return
	}
	found := "no entry for the topic"
	if hasEntry {
		found = "an entry of an older generation"
	}
	l.topicGen = recorded
	l.retentionHeld = true
	l.logger.WithField("topic", l.topic).WithField("recorded_generation", recorded).
		WithField("stored_generation", stored).WithField("found", found).WithField("file", TopicsFile).
		Warn("stored topic configuration is older than the one this partition ran with: " +
			"retention suspended, nothing deleted by it, until the topic's configuration is written again")
}

// setTopicGen records that the topic's configuration was written at gen:
// the partition runs with it, and a suspended retention applies again.
func (l *Log) setTopicGen(gen uint64) {
	l.mu.Lock()
	l.topicGen = gen
	l.retentionHeld = false
	l.mu.Unlock()
}

// RetentionHeld reports whether retention by time and size is suspended
// because the stored configuration is older than the one the partition ran
// with.
func (l *Log) RetentionHeld() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.retentionHeld
}

// nextTopicGen is the generation a rewrite of t's entry gets: above the
// stored one and above every one its partitions recorded, so that an entry
// written again after the file was lost lifts every guard for good.
// REQUIRES: st.mu held.
func (st *Store) nextTopicGen(t *topic) uint64 {
	gen := st.stored.gens[t.name]
	for _, l := range t.logs {
		if l == nil {
			continue
		}
		l.mu.Lock()
		gen = max(gen, l.topicGen)
		l.mu.Unlock()
	}
	return gen + 1
}
