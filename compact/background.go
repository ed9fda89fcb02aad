package compact

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/partlog"
)

// Defaults of the background cleaner (Kafka's broker settings).
const (
	DefaultBackoff      = 15 * time.Second // log.cleaner.backoff.ms
	DefaultFailureDelay = 5 * time.Minute  // how long a log that failed to clean is skipped
)

// errStopped ends a cleaning when the background cleaner stops.
var errStopped = errors.New("compact: cleaner stopped")

// BackgroundOptions configure the cleaner threads of a mount.
type BackgroundOptions struct {
	Options                     // per-cleaner options; DedupeBufferSize is shared by all threads
	Threads             int     // log.cleaner.threads (1)
	IOMaxBytesPerSecond float64 // log.cleaner.io.max.bytes.per.second (0: unlimited)
	Backoff             time.Duration
	FailureDelay        time.Duration
	// OnCleaned, if set, is told about every cleaning that did work
	// (metrics.Metrics.Cleaned fits).
	OnCleaned func(topic string, partition int, read, written, removed int64)
	// OnFailed, if set, is told about every cleaning that failed (after
	// the failure was logged with topic, partition and file).
	OnFailed func(topic string, partition int, err error)
}

// StartLogs runs Threads cleaner goroutines over the logs that logs()
// returns, each repeatedly cleaning the filthiest eligible log nobody else
// is cleaning, and sleeping Backoff when there is none. stop ends them,
// interrupting a cleaning in progress (its cleaned files are removed), and
// waits.
func StartLogs(logs func() []Target, opt BackgroundOptions) (stop func()) {
	if opt.Threads <= 0 {
		opt.Threads = 1
	}
	if opt.Backoff <= 0 {
		opt.Backoff = DefaultBackoff
	}
	if opt.FailureDelay <= 0 {
		opt.FailureDelay = DefaultFailureDelay
	}
	opt.setDefaults()
	opt.DedupeBufferSize /= int64(opt.Threads)
	if opt.Throttle == nil {
		opt.Throttle = NewThrottle(opt.IOMaxBytesPerSecond, nil, nil)
	}
	quit := make(chan struct{})
	opt.stopped = quit
	m := &manager{logs: logs, opt: opt, busy: map[string]bool{}, failed: map[string]time.Time{}}
	var wg sync.WaitGroup
	for i := 0; i < opt.Threads; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			m.thread(id, quit)
		}(i)
	}
	var once sync.Once
	return func() {
		once.Do(func() { close(quit) })
		wg.Wait()
	}
}

// manager hands logs to cleaner threads (Kafka's LogCleanerManager).
type manager struct {
	logs func() []Target
	opt  BackgroundOptions

	mu     sync.Mutex
	busy   map[string]bool      // logs being cleaned; REQUIRES: mu held
	failed map[string]time.Time // logs that failed, until when to skip them; REQUIRES: mu held
}

func logKey(t Target) string { return fmt.Sprintf("%s-%d", t.Topic(), t.Partition()) }

func (m *manager) thread(id int, quit <-chan struct{}) {
	c := NewCleaner(m.opt.Options)
	log := m.opt.Logger.WithField("cleaner", id)
	for {
		target := m.grab(c)
		if target == nil {
			select {
			case <-quit:
				return
			case <-time.After(m.opt.Backoff):
				continue
			}
		}
		st, err := c.Clean(target, false)
		m.release(target, err)
		switch {
		case errors.Is(err, errStopped):
			return
		case errors.Is(err, ErrConflict):
			log.WithError(err).WithField("log", logKey(target)).Info("segments changed during cleaning; will retry")
		case err != nil:
			// counted before logged: a reader of the log line finds the count
			if m.opt.OnFailed != nil {
				m.opt.OnFailed(target.Topic(), target.Partition(), err)
			}
			log.WithError(err).WithFields(logrus.Fields{"topic": target.Topic(), "partition": target.Partition(),
				"file": partlog.FileOf(err)}).Error("cleaning failed; skipping this log for a while")
		case st.Rounds > 0 && m.opt.OnCleaned != nil:
			m.opt.OnCleaned(target.Topic(), target.Partition(), st.BytesRead, st.BytesWritten, st.RecordsRemoved)
		}
		select {
		case <-quit:
			return
		default:
		}
	}
}

// grab picks the filthiest eligible log that no thread is cleaning.
func (m *manager) grab(c *Cleaner) Target {
	type cand struct {
		t     Target
		ratio float64
	}
	var cands []cand
	now := m.opt.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.logs() {
		k := logKey(t)
		if m.busy[k] || now.Before(m.failed[k]) {
			continue
		}
		cl, cfg := c.Check(t)
		if cfg.Compacted && cl.Eligible(cfg) {
			cands = append(cands, cand{t, cl.Ratio})
		}
	}
	if len(cands) == 0 {
		return nil
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].ratio > cands[j].ratio })
	m.busy[logKey(cands[0].t)] = true
	return cands[0].t
}

func (m *manager) release(t Target, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := logKey(t)
	delete(m.busy, k)
	if err != nil && !errors.Is(err, errStopped) && !errors.Is(err, ErrConflict) {
		m.failed[k] = m.opt.Now().Add(m.opt.FailureDelay)
	}
}
