package logstore

import (
	"errors"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/partlog"
)

// startBackground runs flush.ms flushes, delayed deletes, retention and
// checkpoints until Close.
func (st *Store) startBackground() {
	st.wg.Add(1)
	go func() {
		defer st.wg.Done()
		tick := time.NewTicker(st.opt.tickInterval())
		defer tick.Stop()
		lastRetention, lastCheckpoint := st.opt.Now(), st.opt.Now()
		for {
			select {
			case <-st.stop:
				return
			case l := <-st.flushReq:
				l.backgroundFailed("flush", l.Sync())
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
			_ = st.RunMaintenance(retention, cp)
		}
	}()
}

// RunMaintenance does one round of background work: flushes due by
// flush.ms, removal of .deleted files past file.delete.delay.ms, index
// rebuilds scheduled by failed lookups, and, when asked, retention and the
// checkpoint files. Each failure is logged and reported to
// Options.OnBackgroundError; all of them are returned.
func (st *Store) RunMaintenance(retention, checkpoints bool) error {
	if st.opt.ReadOnly {
		return nil
	}
	var errs []error
	for _, l := range st.Logs() {
		if l.flushDue() {
			errs = append(errs, l.backgroundFailed("flush", l.Sync()))
		}
		if retention {
			_, err := l.ApplyRetention()
			errs = append(errs, l.backgroundFailed("retention", err))
		}
		errs = append(errs, l.backgroundFailed("delete", l.removeDueDeletes(false)),
			l.backgroundFailed("rebuild", l.runRebuilds()))
	}
	if checkpoints {
		errs = append(errs, st.backgroundFailed("checkpoint", "", -1, st.logger, st.writeCheckpoints()))
	}
	return errors.Join(errs...)
}

// backgroundFailed logs a failure of background work on l and reports it;
// it returns err.
func (l *Log) backgroundFailed(task string, err error) error {
	if l.store == nil {
		return err
	}
	return l.store.backgroundFailed(task, l.topic, l.partition, l.logger, err)
}

func (st *Store) backgroundFailed(task, topic string, partition int, lg *logrus.Entry, err error) error {
	if err == nil {
		return nil
	}
	lg.WithFields(logrus.Fields{"task": task, "topic": topic, "partition": partition, "file": partlog.FileOf(err)}).
		WithError(err).Error("background work failed")
	if f := st.opt.OnBackgroundError; f != nil {
		f(task, topic, partition, err)
	}
	return err
}
