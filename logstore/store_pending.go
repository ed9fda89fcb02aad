package logstore

import (
	"fmt"
	"sync"
	"time"

	"github.com/partfs/partfs/config"
	"github.com/partfs/partfs/kafkaname"
	"github.com/partfs/partfs/partlog"
)

// pendingLog is a partition found in the data directory and not opened
// yet. It is opened once: by openPending, or by the first Log that asks
// for it, whichever comes first; the other waits for that open.
type pendingLog struct {
	once   sync.Once
	t      *topic
	n      int
	cfg    config.Topic
	cfgErr error // the topic's configuration error: the partition is not opened
	cp     logCheckpoints
	cps    rootCheckpoints
}

// openPending opens the partitions given on parallel.Workers goroutines,
// reporting progress past a second.
func (st *Store) openPending(pend []*pendingLog) {
	eachPartition(len(pend), st.opt.Progress, "opening partitions", func(i int) error {
		st.openLog(pend[i])
		return nil
	})
}

// openInBackground opens the partitions given on other goroutines and
// returns at once; WaitOpened waits for them. Open uses it with
// Options.OpenInBackground.
func (st *Store) openInBackground(pend []*pendingLog) {
	st.opened = make(chan struct{})
	go func() {
		defer close(st.opened)
		t0 := time.Now()
		st.openPending(pend)
		st.logger.WithField("partitions", len(pend)).WithField("seconds", time.Since(t0).Seconds()).Info("every partition opened")
		st.reportNoSidecar()
	}()
}

// WaitOpened returns once every partition found at Open has been opened
// or found unopenable (at once unless Options.OpenInBackground). What
// works on every partition (checkpoints, maintenance, close, a topic's
// configuration) calls it first, never with st.mu held.
func (st *Store) WaitOpened() {
	if st.opened != nil {
		<-st.opened
	}
}

// Opened reports, without waiting, whether WaitOpened would return at once.
func (st *Store) Opened() bool {
	if st.opened == nil {
		return true
	}
	select {
	case <-st.opened:
		return true
	default:
		return false
	}
}

// skipPendingAtClose makes a close of a store opened clean leave the
// partitions still pending as they are (untouched since the clean
// shutdown, their checkpoint entries kept); after an unclean open every
// one is recovered before the clean-shutdown marker may be written.
func (st *Store) skipPendingAtClose() {
	if st.clean {
		st.skipPending.Store(true)
	}
	st.WaitOpened()
}

// openLog opens p (once) and puts it in its topic's slot, or records why
// it is not opened (its checkpoint entries are then kept as they were).
func (st *Store) openLog(p *pendingLog) {
	p.once.Do(func() {
		if st.skipPending.Load() {
			st.mu.Lock()
			st.keepCheckpoints(p.t.name, p.n, p.cps)
			st.mu.Unlock()
			return
		}
		dir := st.path(kafkaname.PartitionDir(p.t.name, p.n))
		var l *Log
		err := p.cfgErr
		if err == nil {
			l, err = st.loadLog(p.t.name, p.n, dir, p.cfg, p.cp)
			if err != nil {
				st.logger.WithError(err).WithField("topic", p.t.name).WithField("path", dir).Error("partition not opened")
			}
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		delete(p.t.pending, p.n)
		if err != nil {
			p.t.unopened[p.n] = fmt.Errorf("%s not opened: %w: %v", dir, partlog.ErrCorrupt, err)
			st.keepCheckpoints(p.t.name, p.n, p.cps)
			return
		}
		p.t.logs[p.n] = l
	})
}
