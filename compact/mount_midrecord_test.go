package compact_test

import "testing"

// TestMountedReaderMidRecordAcrossCompaction is SPEC §3's harder case: a
// reader whose file position is inside a record (here: 64-byte reads) when
// the segment is cleaned must continue with the next surviving record,
// never with the middle of another one.
func TestMountedReaderMidRecordAcrossCompaction(t *testing.T) {
	m := mountCompacted(t)
	j := m.openJSONL(64)
	j.lines(len(m.before) / 2) // the bufio buffer has read on into the next record
	m.clean()
	j.lines(-1)
	j.check(m.before)
}
