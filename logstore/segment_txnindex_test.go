package logstore

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/partfs/partfs/index"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
)

// txnBuilder encodes a segment of plain, transactional and marker batches.
type txnBuilder struct {
	t   *testing.T
	enc record.Encoder
	out []byte
}

func (tb *txnBuilder) add(base int64, n int, opt record.BatchOptions) {
	rs := make([]record.Record, n)
	for i := range rs {
		rs[i] = record.Record{Timestamp: 1000 + base + int64(i), Value: []byte(fmt.Sprint("v", base+int64(i)))}
	}
	var err error
	if tb.out, err = tb.enc.AppendBatch(tb.out, base, rs, opt); err != nil {
		tb.t.Fatal(err)
	}
}

func (tb *txnBuilder) marker(base int64, pid int64, typ int16) {
	key := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(typ))
	val := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint16(nil, 0), 0)
	var err error
	tb.out, err = tb.enc.AppendBatch(tb.out, base, []record.Record{{Timestamp: 1000 + base, Key: key, Value: val}},
		record.BatchOptions{Control: true, Transactional: true, ProducerID: pid, ProducerEpoch: 0, BaseSequence: -1, KeepProducer: true, PartitionLeaderEpoch: 0})
	if err != nil {
		tb.t.Fatal(err)
	}
}

func txnOpts(pid int64) record.BatchOptions {
	return record.BatchOptions{Transactional: true, ProducerID: pid, KeepProducer: true}
}

// txnSegment encodes: 0-1 plain, 2-3 pid 7 aborted, 4 ABORT marker (pid 7),
// 5-6 pid 8 committed, 7 COMMIT marker (pid 8), 8 plain.
func txnSegment(t *testing.T) []byte {
	tb := &txnBuilder{t: t}
	tb.add(0, 2, record.BatchOptions{})
	tb.add(2, 2, txnOpts(7))
	tb.marker(4, 7, 0)
	tb.add(5, 2, txnOpts(8))
	tb.marker(7, 8, 1)
	tb.add(8, 1, record.BatchOptions{})
	return tb.out
}

// writeTxnPartition writes seg as partition tx-0 of a new data directory,
// with txnIndex as its .txnindex when not nil.
func writeTxnPartition(seg, txnIndex []byte) (*vfs.CrashFS, *clock) {
	files := map[string][]byte{"00000000000000000000.log": seg}
	if txnIndex != nil {
		files["00000000000000000000.txnindex"] = txnIndex
	}
	return writePartition("tx-0", files)
}

// openTxnStore opens the store of fs and returns its partition tx-0.
func openTxnStore(t *testing.T, fs vfs.FS, c *clock) (*Store, *Log) {
	st := openTopics(t, "/data", testOptions(fs, c, nil))
	t.Cleanup(func() { st.Close() })
	l, _ := st.Log("tx", 0)
	return st, l
}

// checkCommittedOnly: a read of l from 0 gives txnSegment's committed
// records only (aborted records and markers skipped), and its stats count
// them.
func checkCommittedOnly(t *testing.T, l *Log) {
	t.Helper()
	var got []int64
	for _, r := range readLog(t, l, 0) {
		got = append(got, r.off)
	}
	if fmt.Sprint(got) != "[0 1 5 6 8]" {
		t.Fatalf("read offsets %v, want [0 1 5 6 8] (aborted records and markers skipped)", got)
	}
	if s := l.Stats(); s.Records != 5 {
		t.Fatalf("stats records %d, want 5", s.Records)
	}
}

func TestAbortedTransactionsSkipped(t *testing.T) {
	fs, c := writeTxnPartition(txnSegment(t), index.AppendTxnEntry(nil, index.AbortedTxn{ProducerID: 7, FirstOffset: 2, LastOffset: 4, LastStableOffset: 2}))
	_, l := openTxnStore(t, fs, c)
	if l.EndOffset() != 9 {
		t.Fatalf("end %d", l.EndOffset())
	}
	checkCommittedOnly(t, l)
	if got := readN(t, l, 2, 1); len(got) != 1 || got[0].off != 5 {
		t.Fatalf("read from an aborted offset gives %v", got)
	}
}

// TestAbortedTransactionsFromMarkers: with no .txnindex (a copied segment),
// recovery rebuilds the aborted transaction from its ABORT marker.
func TestAbortedTransactionsFromMarkers(t *testing.T) {
	fs, c := writeTxnPartition(txnSegment(t), nil)
	st, l := openTxnStore(t, fs, c)
	checkCommittedOnly(t, l)
	st.Close() // a clean reopen reads the written .txnindex
	_, l = openTxnStore(t, fs, c)
	if n := len(readLog(t, l, 0)); n != 5 {
		t.Fatalf("after a clean reopen %d records", n)
	}
	if !exists(fs, "/data/tx-0/00000000000000000000.txnindex") {
		t.Fatal("rebuilt transaction index not written")
	}
}

// TestRebuiltTxnIndexLastStableOffset: the .txnindex entries recovery
// writes carry Kafka's last stable offset: the marker's offset + 1, or the
// first offset of a transaction of another producer still open then.
func TestRebuiltTxnIndexLastStableOffset(t *testing.T) {
	for _, c := range []struct {
		name string
		seg  func(tb *txnBuilder)
		want [][4]int64 // pid, first, last, lso
	}{
		{"alone", func(tb *txnBuilder) {
			tb.add(0, 2, record.BatchOptions{})
			tb.add(2, 2, txnOpts(7))
			tb.marker(4, 7, 0)
			tb.add(5, 1, record.BatchOptions{})
		}, [][4]int64{{7, 2, 4, 5}}},
		{"another open", func(tb *txnBuilder) {
			tb.add(0, 1, record.BatchOptions{})
			tb.add(1, 1, txnOpts(8))
			tb.add(2, 2, txnOpts(7))
			tb.marker(4, 7, 0)
			tb.marker(5, 8, 0)
			tb.add(6, 1, record.BatchOptions{})
		}, [][4]int64{{7, 2, 4, 1}, {8, 1, 5, 6}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tb := &txnBuilder{t: t}
			c.seg(tb)
			fs, clk := writeTxnPartition(tb.out, nil)
			st, _ := openTxnStore(t, fs, clk)
			st.Close()
			name := "/data/tx-0/00000000000000000000.txnindex"
			es, err := index.ParseTxnIndex(readFileBytes(t, fs, name), name)
			var got [][4]int64
			for _, e := range es {
				got = append(got, [4]int64{e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset})
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) || err != nil {
				t.Fatalf("txnindex %v (%v), want %v", got, err, c.want)
			}
		})
	}
}
