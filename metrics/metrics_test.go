package metrics

import (
	"bytes"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/partfs/partfs/partlog"
)

// oneStore is the smallest partlog.Store: one topic with one partition.
type oneStore struct {
	partlog.Store
	log oneLog
}

type oneLog struct {
	partlog.Log
	stats partlog.Stats
}

func (s *oneStore) Topics() ([]string, error)                  { return []string{"orders"}, nil }
func (s *oneStore) Partitions(string) (int, error)             { return 1, nil }
func (s *oneStore) Partition(string, int) (partlog.Log, error) { return &s.log, nil }
func (l *oneLog) Stats() partlog.Stats                         { return l.stats }

func TestTextParsesWithExpfmt(t *testing.T) {
	store := &oneStore{log: oneLog{stats: partlog.Stats{LogStartOffset: 5, LogEndOffset: 42, SizeBytes: 4096, Segments: 2, Records: 37, DirtyRatio: 0.25}}}
	m := New(store)
	m.ObserveOp("read", time.Now().Add(-time.Millisecond), 0)
	m.ObserveOp("write", time.Now(), 5)
	m.Appended("orders", 0, 120, 3)
	m.Cleaned("orders", 0, 1000, 400, 7)

	text, err := m.Text()
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("expfmt cannot parse .metrics: %v\n%s", err, text)
	}
	gauge := func(name string) float64 {
		f := families[name]
		if f == nil || len(f.Metric) != 1 {
			t.Fatalf("metric %s missing in\n%s", name, text)
		}
		if g := f.Metric[0].GetGauge(); g != nil {
			return g.GetValue()
		}
		return f.Metric[0].GetCounter().GetValue()
	}
	for name, want := range map[string]float64{
		"partfs_partition_log_start_offset":    5,
		"partfs_partition_log_end_offset":      42,
		"partfs_partition_size_bytes":          4096,
		"partfs_partition_records":             37,
		"partfs_partition_cleaner_dirty_ratio": 0.25,
		"partfs_appended_records_total":        3,
		"partfs_cleaner_removed_records_total": 7,
		"partfs_fuse_errors_total":             1,
	} {
		if got := gauge(name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for _, name := range []string{"go_goroutines", "process_open_fds", "process_resident_memory_bytes"} {
		if families[name] == nil {
			t.Errorf("%s missing", name)
		}
	}
	if h := families["partfs_fuse_operation_seconds"]; h == nil || len(h.Metric) != 2 {
		t.Fatalf("latency histogram missing or wrong: %v", h)
	}
}

func TestNilMetricsIgnoresCalls(t *testing.T) {
	var m *Metrics
	m.ObserveOp("read", time.Now(), 0)
	m.Appended("t", 0, 1, 1)
	if text, err := m.Text(); err != nil || text != nil {
		t.Fatalf("nil metrics: %q %v", text, err)
	}
}
