// Package metrics owns partfs's Prometheus metrics: per-partition offsets,
// sizes and traffic, cleaner work, recovery truncations and FUSE operation
// counts and latencies. The same text is served as MOUNTPOINT/.metrics and,
// optionally, over HTTP. Partition gauges are read from the store at scrape
// time, so idle partitions cost nothing between scrapes.
package metrics

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/partfs/partfs/partlog"
)

// Metrics is safe for concurrent use. A nil *Metrics ignores every call, so
// callers need no checks.
type Metrics struct {
	reg        *prometheus.Registry
	ops        *prometheus.CounterVec
	opErrors   *prometheus.CounterVec
	opLatency  *prometheus.HistogramVec
	appendB    *prometheus.CounterVec
	appendR    *prometheus.CounterVec
	readB      *prometheus.CounterVec
	readR      *prometheus.CounterVec
	cleanRuns  *prometheus.CounterVec
	cleanRead  *prometheus.CounterVec
	cleanWrite *prometheus.CounterVec
	cleanDrop  *prometheus.CounterVec
	truncs     *prometheus.CounterVec
	failures   *prometheus.CounterVec
	schemaErrs *prometheus.CounterVec
}

var partLabels = []string{"topic", "partition"}

// New builds the metrics of one mount over store (which may be nil).
func New(store partlog.Store) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	// The daemon's own health: goroutines, memory, open fds, RSS.
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "partfs", Name: name, Help: help}, labels)
		m.reg.MustRegister(c)
		return c
	}
	m.ops = counter("fuse_operations_total", "FUSE requests handled, by operation.", "op")
	m.opErrors = counter("fuse_errors_total", "FUSE requests answered with an error, by operation and errno.", "op", "errno")
	m.opLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "partfs", Name: "fuse_operation_seconds", Help: "Time to answer a FUSE request, by operation.",
		Buckets: prometheus.ExponentialBuckets(5e-6, 4, 10),
	}, []string{"op"})
	m.reg.MustRegister(m.opLatency)
	m.appendB = counter("appended_bytes_total", "Record value bytes appended through the mount.", partLabels...)
	m.appendR = counter("appended_records_total", "Records appended through the mount.", partLabels...)
	m.readB = counter("read_bytes_total", "Rendered bytes read through the mount.", partLabels...)
	m.readR = counter("read_records_total", "Records rendered to readers through the mount.", partLabels...)
	m.cleanRuns = counter("cleaner_runs_total", "Log cleaner passes over a partition.", partLabels...)
	m.cleanRead = counter("cleaner_read_bytes_total", "Segment bytes read by the cleaner.", partLabels...)
	m.cleanWrite = counter("cleaner_written_bytes_total", "Segment bytes written by the cleaner.", partLabels...)
	m.cleanDrop = counter("cleaner_removed_records_total", "Records removed by the cleaner.", partLabels...)
	m.truncs = counter("recovery_truncated_bytes_total", "Bytes cut from torn or corrupt segment tails at recovery.", partLabels...)
	m.schemaErrs = counter("schema_errors_total", "Schema IDs whose payloads are shown undecoded (unknown, invalid, undecodable) or whose versions are deleted, once per ID.", "kind")
	m.failures = counter("background_failures_total",
		"Failed background work (clean, flush, retention, delete, rebuild, checkpoint); partition -1 is the data directory's own files.",
		"task", "topic", "partition")
	m.AddStore(store)
	return m
}

// AddStore adds per-partition gauges read from store at scrape time (for
// metrics created before the store was open). A nil store is ignored.
func (m *Metrics) AddStore(store partlog.Store) {
	if m != nil && store != nil {
		m.reg.MustRegister(&storeCollector{store: store})
	}
}

func part(p int) string { return strconv.Itoa(p) }

// ObserveOp records one FUSE request; errno is 0 on success.
func (m *Metrics) ObserveOp(op string, start time.Time, errno uintptr) {
	if m == nil {
		return
	}
	m.ops.WithLabelValues(op).Inc()
	m.opLatency.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if errno != 0 {
		m.opErrors.WithLabelValues(op, strconv.FormatUint(uint64(errno), 10)).Inc()
	}
}

// Appended counts records appended to a partition.
func (m *Metrics) Appended(topic string, partition int, bytes, records int) {
	if m == nil {
		return
	}
	m.appendB.WithLabelValues(topic, part(partition)).Add(float64(bytes))
	m.appendR.WithLabelValues(topic, part(partition)).Add(float64(records))
}

// Read counts rendered bytes and records served from a partition.
func (m *Metrics) Read(topic string, partition int, bytes, records int) {
	if m == nil {
		return
	}
	m.readB.WithLabelValues(topic, part(partition)).Add(float64(bytes))
	m.readR.WithLabelValues(topic, part(partition)).Add(float64(records))
}

// Cleaned counts one cleaner pass over a partition.
func (m *Metrics) Cleaned(topic string, partition int, read, written, removed int64) {
	if m == nil {
		return
	}
	l := []string{topic, part(partition)}
	m.cleanRuns.WithLabelValues(l...).Inc()
	m.cleanRead.WithLabelValues(l...).Add(float64(read))
	m.cleanWrite.WithLabelValues(l...).Add(float64(written))
	m.cleanDrop.WithLabelValues(l...).Add(float64(removed))
}

// Truncated counts bytes cut from a partition at recovery.
func (m *Metrics) Truncated(topic string, partition int, bytes int64) {
	if m == nil {
		return
	}
	m.truncs.WithLabelValues(topic, part(partition)).Add(float64(bytes))
}

// BackgroundFailed counts one failure of background work on a partition
// (topic "" and partition -1 for the data directory's own files).
func (m *Metrics) BackgroundFailed(task, topic string, partition int) {
	if m == nil {
		return
	}
	m.failures.WithLabelValues(task, topic, part(partition)).Inc()
}

// SchemaFailed counts a schema ID whose payloads cannot be decoded, or
// whose versions are deleted, by kind.
func (m *Metrics) SchemaFailed(kind string) {
	if m == nil {
		return
	}
	m.schemaErrs.WithLabelValues(kind).Inc()
}

// Text renders every metric in the Prometheus text exposition format.
func (m *Metrics) Text() ([]byte, error) {
	var buf bytes.Buffer
	if m == nil {
		return nil, nil
	}
	mfs, err := m.reg.Gather()
	if err != nil {
		return nil, err
	}
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// Handler serves the metrics over HTTP (for --metrics-addr).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
