package logstore

import (
	"errors"
	"syscall"
	"testing"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/vfs"
)

// TestAddPartitionRollsBack: a partition whose creation fails leaves no
// directory behind, so the retry succeeds instead of answering EEXIST.
func TestAddPartitionRollsBack(t *testing.T) {
	base, c := vfs.NewCrashFS(), newClock()
	inj := &vfs.NthInjector{Op: vfs.OpCreate, N: 1, Err: syscall.EMFILE, Filter: "t-1/partition.metadata"}
	st, _ := openAt(t, "/data", testOptions(vfs.NewErrorFS(base, inj), c, nil))
	defer st.Close()
	if err := st.AddPartition("t", 1); !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("AddPartition with the create failing: %v, want EMFILE", err)
	}
	if _, err := base.Stat("/data/t-1"); !isNotExist(err) {
		t.Fatalf("t-1 left behind by the failed creation: %v", err)
	}
	if err := st.AddPartition("t", 1); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if _, err := st.Log("t", 1); err != nil {
		t.Fatal(err)
	}
}

// TestAddPartitionToPre28Topic: a topic whose partitions have no
// partition.metadata (written before Kafka 2.8) gets a topic id when a
// partition is added, and keeps it across a reopen.
func TestAddPartitionToPre28Topic(t *testing.T) {
	fs, c := vfs.NewCrashFS(), newClock()
	st, _ := openTest(t, fs, c, nil)
	st.Close()
	if err := fs.Remove("/data/t-0/partition.metadata"); err != nil {
		t.Fatal(err)
	}
	st, _ = openTest(t, fs, c, nil)
	if err := st.AddPartition("t", 1); err != nil {
		t.Fatalf("AddPartition: %v", err)
	}
	id := st.topics["t"].id
	st.Close()
	st, _ = openTest(t, fs, c, nil)
	defer st.Close()
	if n, err := st.Partitions("t"); n != 2 || err != nil {
		t.Fatalf("partitions %d %v", n, err)
	}
	if st.topics["t"].id != id {
		t.Errorf("topic id changed across a reopen")
	}
	if err := st.AddPartition("t", 2); err != nil || !errors.Is(st.AddPartition("t", 2), partlog.ErrExists) {
		t.Fatalf("AddPartition 2: %v", err)
	}
}
