package fs

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/memlog"
)

// calls records what a store and its logs were asked, in order.
type calls struct {
	mu  sync.Mutex
	all []string
}

func (c *calls) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all = append(c.all, s)
}

// bulkStore is a memlog store that is a partlog.BulkSyncer whose logs are
// partlog.SidecarWriters, recording the calls that make things durable.
type bulkStore struct {
	*memlog.Store
	c *calls
}

func (b bulkStore) SyncAll() error { b.c.add("SyncAll"); return nil }

func (b bulkStore) Partition(topic string, n int) (partlog.Log, error) {
	l, err := b.Store.Partition(topic, n)
	if err != nil {
		return nil, err
	}
	return bulkLog{l, b.c}, nil
}

type bulkLog struct {
	partlog.Log
	c *calls
}

func (l bulkLog) Sync() error { l.c.add("Sync"); return l.Log.Sync() }

func (l bulkLog) SaveSidecar(name string, data []byte) error {
	l.c.add("SaveSidecar")
	return l.Log.SaveSidecar(name, data)
}

func (l bulkLog) WriteSidecar(name string, data []byte) error {
	l.c.add("WriteSidecar")
	return l.Log.SaveSidecar(name, data)
}

// TestBulkSidecarSave: with many position sidecars to save on a
// BulkSyncer, every log is made durable by one SyncAll before any sidecar
// is written (unsynced), and one more SyncAll follows them; with few,
// each save syncs its own log and writes its sidecar durably.
func TestBulkSidecarSave(t *testing.T) {
	defer func(n int) { bulkSaveFrom = n }(bulkSaveFrom)
	bulkSaveFrom = 3
	c := &calls{}
	m := mountWith(t, Options{Store: bulkStore{memlog.New(memlog.Options{}), c}})
	m.Sh("mkdir t t/1 t/2")
	write := func(parts ...int) {
		for _, p := range parts {
			m.Sh(fmt.Sprintf("echo line >> t/%d/log && stat t/%d/log > /dev/null", p, p))
		}
	}
	write(0, 1, 2)
	c.all = nil
	if err := m.fsys.saveAll(); err != nil {
		t.Fatal(err)
	}
	want := []string{"SyncAll", "WriteSidecar", "WriteSidecar", "WriteSidecar", "SyncAll"}
	if !slices.Equal(c.all, want) {
		t.Errorf("three sidecars to save: %s, want %s", strings.Join(c.all, " "), strings.Join(want, " "))
	}
	write(1, 2)
	c.all = nil
	if err := m.fsys.saveAll(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(c.all) // the saves run on several goroutines
	want = []string{"SaveSidecar", "SaveSidecar", "Sync", "Sync"}
	if !slices.Equal(c.all, want) {
		t.Errorf("two sidecars to save: %s, want %s", strings.Join(c.all, " "), strings.Join(want, " "))
	}
}
