package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/partfs/partfs/partlog"
)

// quarantine is how long, after a call ran out of time, further calls fail
// at once with partlog.ErrTimeout instead of waiting again: a filesystem
// request that makes several calls then fails within one timeout. The
// first call after it tries the cluster again.
const quarantine = time.Second

// call runs fn with a context bounded by the timeout and classifies its
// error. A call that runs out of time is logged with what it was about.
func (s *Store) call(w where, op string, fn func(ctx context.Context) error) error {
	s.mu.Lock()
	down := time.Until(s.downUntil)
	s.mu.Unlock()
	if down > 0 {
		return fmt.Errorf("%s: %s: cluster did not answer within %v: %w", w, op, s.opt.Timeout, partlog.ErrTimeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opt.Timeout)
	defer cancel()
	err := fn(ctx)
	if err == nil {
		return nil
	}
	if errors.Is(err, partlog.ErrNotFound) || errors.Is(err, partlog.ErrInvalid) {
		return err // already classified (a missing partition, a refusal)
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		s.mu.Lock()
		s.downUntil = time.Now().Add(quarantine)
		s.mu.Unlock()
		s.opt.Logger.WithFields(logrus.Fields{"broker": w.broker, "topic": w.topic, "partition": w.partition, "op": op,
			"timeout": s.opt.Timeout.String()}).WithError(err).Warn("kafka cluster did not answer in time")
		if !errors.Is(err, partlog.ErrTimeout) {
			err = fmt.Errorf("%s: %s: no answer within %v: %w: %w", w, op, s.opt.Timeout, partlog.ErrTimeout, err)
		}
		return err
	}
	return classify(w, op, err)
}
