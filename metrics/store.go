package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/partfs/partfs/partlog"
)

// storeCollector reads every partition's Stats at scrape time.
type storeCollector struct{ store partlog.Store }

var (
	descStart    = desc("log_start_offset", "The partition's log start offset.")
	descEnd      = desc("log_end_offset", "The partition's log end offset.")
	descSize     = desc("size_bytes", "Bytes of the partition's segment files.")
	descSegments = desc("segments", "Segments in the partition.")
	descRecords  = desc("records", "Records a reader of log.jsonl sees now.")
	descDirty    = desc("cleaner_dirty_ratio", "Share of the log the cleaner has not cleaned yet.")
	descRecovery = desc("recovery_point", "Offset below which the partition is known durable.")
)

func desc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("partfs_partition_"+name, help, partLabels, nil)
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descStart, descEnd, descSize, descSegments, descRecords, descDirty, descRecovery} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	topics, _ := c.store.Topics() // a store that cannot list them has no figures to show
	for _, topic := range topics {
		n, err := c.store.Partitions(topic)
		if err != nil {
			continue
		}
		for p := 0; p < n; p++ {
			log, err := c.store.Partition(topic, p)
			if err != nil {
				continue
			}
			st := log.Stats()
			labels := []string{topic, strconv.Itoa(p)}
			gauge := func(d *prometheus.Desc, v float64) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
			}
			gauge(descStart, float64(st.LogStartOffset))
			gauge(descEnd, float64(st.LogEndOffset))
			gauge(descSize, float64(st.SizeBytes))
			gauge(descSegments, float64(st.Segments))
			gauge(descRecords, float64(st.Records))
			gauge(descDirty, st.DirtyRatio)
			gauge(descRecovery, float64(st.RecoveryPoint))
		}
	}
}
