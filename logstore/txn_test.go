package logstore

import (
	"encoding/binary"
	"fmt"
	"testing"

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

func TestAbortedTransactionsSkipped(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	fs.MkdirAll("/data/tx-0", 0o755)
	w, _ := fs.Create("/data/tx-0/00000000000000000000.log")
	w.Write(txnSegment(t))
	w.Close()
	entry := make([]byte, 34) // version 0, pid 7, first 2, last 4, lso 2
	binary.BigEndian.PutUint64(entry[2:], 7)
	binary.BigEndian.PutUint64(entry[10:], 2)
	binary.BigEndian.PutUint64(entry[18:], 4)
	binary.BigEndian.PutUint64(entry[26:], 2)
	w, _ = fs.Create("/data/tx-0/00000000000000000000.txnindex")
	w.Write(entry)
	w.Close()
	st, err := Open("/data", testOptions(fs, c, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, _ := st.Log("tx", 0)
	if l.EndOffset() != 9 {
		t.Fatalf("end %d", l.EndOffset())
	}
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
	if got := readN(t, l, 2, 1); len(got) != 1 || got[0].off != 5 {
		t.Fatalf("read from an aborted offset gives %v", got)
	}
}

// TestAbortedTransactionsFromMarkers: with no .txnindex (a copied segment),
// recovery rebuilds the aborted transaction from its ABORT marker.
func TestAbortedTransactionsFromMarkers(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	fs.MkdirAll("/data/tx-0", 0o755)
	w, _ := fs.Create("/data/tx-0/00000000000000000000.log")
	w.Write(txnSegment(t))
	w.Close()
	st, err := Open("/data", testOptions(fs, c, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, _ := st.Log("tx", 0)
	var got []int64
	for _, r := range readLog(t, l, 0) {
		got = append(got, r.off)
	}
	if fmt.Sprint(got) != "[0 1 5 6 8]" {
		t.Fatalf("read offsets %v, want [0 1 5 6 8]", got)
	}
	if s := l.Stats(); s.Records != 5 {
		t.Fatalf("stats records %d, want 5", s.Records)
	}
	st.Close() // a clean reopen reads the written .txnindex
	st, err = Open("/data", testOptions(fs, c, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	l, _ = st.Log("tx", 0)
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
			fs, clk := vfs.NewCrashFS(), newClock()
			fs.MkdirAll("/data/tx-0", 0o755)
			tb := &txnBuilder{t: t}
			c.seg(tb)
			w, _ := fs.Create("/data/tx-0/00000000000000000000.log")
			w.Write(tb.out)
			w.Close()
			st, err := Open("/data", testOptions(fs, clk, nil))
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			b := readFileBytes(t, fs, "/data/tx-0/00000000000000000000.txnindex")
			var got [][4]int64
			for p := 0; p+34 <= len(b); p += 34 {
				e := b[p:]
				got = append(got, [4]int64{int64(binary.BigEndian.Uint64(e[2:])), int64(binary.BigEndian.Uint64(e[10:])),
					int64(binary.BigEndian.Uint64(e[18:])), int64(binary.BigEndian.Uint64(e[26:]))})
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) || len(b)%34 != 0 {
				t.Fatalf("txnindex %v (%d bytes), want %v", got, len(b), c.want)
			}
		})
	}
}
