package logstore

import (
	"io"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/vfs"
)

// Options configure a Store. Zero values take the defaults below.
type Options struct {
	FS     vfs.FS           // default vfs.Beneath(the data directory)
	Now    func() time.Time // default time.Now
	Logger *logrus.Entry    // default: logrus standard logger
	// Defaults are the mount's --config KEY=VALUE topic defaults (not stored).
	Defaults map[string]string
	// ReadOnly opens without the lock, never writes, and recovers only in
	// memory: a torn tail is hidden, bad indexes are rebuilt in memory.
	ReadOnly bool

	// Background work; a negative interval disables that task.
	CheckpointInterval time.Duration // checkpoints; default 60 s (Kafka's)
	RetentionInterval  time.Duration // retention checks; default 30 s
	FlushInterval      time.Duration // how often flush.ms and delayed deletes are checked; default 1 s
	// NoBackground starts no goroutine at all (tests drive RunMaintenance).
	NoBackground bool

	// OpenInBackground makes Open return once the partitions are found:
	// they open on other goroutines, and one asked for (Store.Log) before
	// its turn opens first. What works on every partition waits for all of
	// them (Store.WaitOpened).
	OpenInBackground bool

	// OnRecovered, if set, is told of every segment re-validated by an
	// unclean open: the bytes scanned and the bytes cut from its tail (for
	// progress and metrics). It runs while partitions open, one call at a
	// time (they open on several goroutines).
	OnRecovered func(topic string, partition int, scanned, cut int64)

	// Progress, if set, is where Open and Close report how many
	// partitions they have opened, synced or closed when that takes more
	// than a second.
	Progress io.Writer

	// OnBackgroundError, if set, is told of every failure of background
	// work (task "flush", "retention", "delete", "rebuild" or "checkpoint";
	// topic "" and partition -1 for the store's own files), after it was
	// logged with topic, partition and file.
	OnBackgroundError func(task, topic string, partition int, err error)

	// Jitter returns a random value in [0, n) for segment.jitter.ms
	// (default math/rand).
	Jitter func(n int64) int64

	// BatchBytes, if positive, cuts an uncompressed append into batches
	// of at most this many bytes (a record larger gets a batch of its
	// own). Zero: one batch per append, as docs/spec.md §4 has it for a write();
	// max.message.bytes bounds batches either way. Smaller batches make
	// finding one record cheaper (it reads and checks its batch whole).
	BatchBytes int
}

func (o *Options) setDefaults(dir string) {
	if o.FS == nil {
		o.FS = vfs.Beneath(dir)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if f := o.OnRecovered; f != nil {
		var mu sync.Mutex
		o.OnRecovered = func(topic string, partition int, scanned, cut int64) {
			mu.Lock()
			defer mu.Unlock()
			f(topic, partition, scanned, cut)
		}
	}
	if o.Logger == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		o.Logger = logrus.NewEntry(l)
	}
	if o.CheckpointInterval == 0 {
		o.CheckpointInterval = 60 * time.Second
	}
	if o.RetentionInterval == 0 {
		o.RetentionInterval = 30 * time.Second
	}
	if o.FlushInterval == 0 {
		o.FlushInterval = time.Second
	}
}

// tickInterval is how often the background loop wakes: flush.ms checks,
// and retention when it is asked to run more often than that.
func (o *Options) tickInterval() time.Duration {
	if o.RetentionInterval > 0 && o.RetentionInterval < o.FlushInterval {
		return o.RetentionInterval
	}
	return o.FlushInterval
}
