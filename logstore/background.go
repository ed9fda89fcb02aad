package logstore

import (
	"errors"
	"time"
)

// startBackground runs flush.ms flushes, delayed deletes, retention and
// checkpoints until Close.
func (st *Store) startBackground() {
	st.wg.Add(1)
	go func() {
		defer st.wg.Done()
		tick := time.NewTicker(st.opt.FlushInterval)
		defer tick.Stop()
		lastRetention, lastCheckpoint := st.opt.Now(), st.opt.Now()
		for {
			select {
			case <-st.stop:
				return
			case l := <-st.flushReq:
				if err := l.Sync(); err != nil {
					st.logger.WithError(err).Warn("flush after roll")
				}
				continue
			case <-tick.C:
			}
			now := st.opt.Now()
			retention := st.opt.RetentionInterval > 0 && now.Sub(lastRetention) >= st.opt.RetentionInterval
			cp := st.opt.CheckpointInterval > 0 && now.Sub(lastCheckpoint) >= st.opt.CheckpointInterval
			if retention {
				lastRetention = now
			}
			if cp {
				lastCheckpoint = now
			}
			if err := st.RunMaintenance(retention, cp); err != nil {
				st.logger.WithError(err).Warn("background maintenance")
			}
		}
	}()
}

// RunMaintenance does one round of background work: flushes due by
// flush.ms, removal of .deleted files past file.delete.delay.ms, index
// rebuilds scheduled by failed lookups, and, when asked, retention and the
// checkpoint files.
func (st *Store) RunMaintenance(retention, checkpoints bool) error {
	if st.opt.ReadOnly {
		return nil
	}
	var errs []error
	for _, l := range st.Logs() {
		if l.flushDue() {
			errs = append(errs, l.Sync())
		}
		if retention {
			_, err := l.ApplyRetention()
			errs = append(errs, err)
		}
		errs = append(errs, l.removeDueDeletes(false), l.runRebuilds())
	}
	if checkpoints {
		errs = append(errs, st.writeCheckpoints())
	}
	return errors.Join(errs...)
}
