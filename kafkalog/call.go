package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/partfs/partfs/partlog"
)

// quarantine is how long, after a call found the cluster unreachable
// (no answer within the timeout, or every connection refused), further
// calls fail at once with the same error instead of trying again: the
// several requests of one system call then fail within one timeout, and a
// system call never waits longer than the timeout plus this. The first
// call after it tries the cluster again.
const quarantine = time.Second

// call runs fn with a context bounded by the timeout and classifies its
// error. A call that finds the cluster unreachable is logged with what it
// was about.
func (s *Store) call(w where, op string, fn func(ctx context.Context) error) error {
	return s.callIn(nil, time.Time{}, w, op, fn)
}

// callIn is call bounded by a request: its context parent (nil: none)
// and its deadline (zero: none), which all calls of the request share.
// A call made when the deadline has passed fails at once with
// partlog.ErrTimeout and a log line; one whose parent was canceled (an
// interrupted request) fails with EINTR and quarantines nothing.
func (s *Store) callIn(parent context.Context, deadline time.Time, w where, op string, fn func(ctx context.Context) error) error {
	s.mu.Lock()
	down, downErr := time.Until(s.downUntil), s.downErr
	s.mu.Unlock()
	if down > 0 {
		return fmt.Errorf("%s: %s: cluster unreachable a moment ago: %w", w, op, downErr)
	}
	if parent == nil {
		parent = context.Background()
	}
	if errors.Is(parent.Err(), context.Canceled) {
		return interrupted(w, op)
	}
	limit := time.Now().Add(s.opt.Timeout)
	if !deadline.IsZero() && deadline.Before(limit) {
		limit = deadline
	}
	if err := parent.Err(); err != nil || !time.Now().Before(limit) {
		err = fmt.Errorf("%s: %s: the request's %v for the cluster ran out: %w", w, op, s.opt.Timeout, partlog.ErrTimeout)
		s.opt.Logger.WithFields(logrus.Fields{"broker": w.broker, "topic": w.topic, "partition": w.partition, "op": op,
			"timeout": s.opt.Timeout.String()}).WithError(err).Warn("kafka cluster did not answer within the request's deadline")
		return err
	}
	ctx, cancel := context.WithDeadline(parent, limit)
	defer cancel()
	err := fn(ctx)
	if err == nil {
		return nil
	}
	if errors.Is(parent.Err(), context.Canceled) {
		return interrupted(w, op)
	}
	if errors.Is(err, partlog.ErrNotFound) || errors.Is(err, partlog.ErrInvalid) {
		return err // already classified (a missing partition, a refusal)
	}
	timedOut := ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)
	if !timedOut && !unreachable(err) {
		return classify(w, op, err)
	}
	if timedOut && !errors.Is(err, partlog.ErrTimeout) {
		err = fmt.Errorf("%s: %s: no answer within the request's %v: %w: %w", w, op, s.opt.Timeout, partlog.ErrTimeout, err)
	} else if !timedOut {
		err = classify(w, op, err)
	}
	s.mu.Lock()
	s.downUntil, s.downErr = time.Now().Add(quarantine), err
	s.mu.Unlock()
	msg := "kafka cluster unreachable"
	if timedOut {
		msg = "kafka cluster did not answer in time"
	}
	s.opt.Logger.WithFields(logrus.Fields{"broker": w.broker, "topic": w.topic, "partition": w.partition, "op": op,
		"timeout": s.opt.Timeout.String()}).WithError(err).Warn(msg)
	return err
}

// interrupted is the error of a call whose request was interrupted (the
// kernel interrupts a FUSE request when its caller gets a signal): EINTR,
// which the caller retries, and no sign that the cluster is down.
func interrupted(w where, op string) error {
	return fmt.Errorf("%s: %s: interrupted: %w", w, op, syscall.EINTR)
}

// unreachable reports whether err says that no broker could be reached
// (a refused or reset connection, a network error), as opposed to an
// answer of the cluster.
func unreachable(err error) bool {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return false
	}
	var ne net.Error
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) || errors.As(err, &ne)
}
