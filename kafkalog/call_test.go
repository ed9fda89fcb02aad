package kafkalog

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/partlog"
)

// TestCallInterrupted: a call whose request is interrupted (its context
// canceled, as go-fuse does on the kernel's FUSE_INTERRUPT) fails with
// EINTR, not ErrTimeout, and the next call goes to the cluster instead
// of failing as if it were down.
func TestCallInterrupted(t *testing.T) {
	s := open(t, cluster(t))
	ctx, cancel := context.WithCancel(context.Background())
	err := s.callIn(ctx, time.Time{}, where{topic: "t", partition: 0}, "list offsets", func(c context.Context) error {
		cancel()
		<-c.Done()
		return c.Err()
	})
	if !errors.Is(err, syscall.EINTR) || errors.Is(err, partlog.ErrTimeout) {
		t.Fatalf("interrupted call: %v, want EINTR", err)
	}
	if err := s.callIn(ctx, time.Time{}, where{topic: "t", partition: 0}, "list offsets", func(context.Context) error { return nil }); !errors.Is(err, syscall.EINTR) {
		t.Fatalf("call of an interrupted request: %v, want EINTR", err)
	}
	ran := false
	if err := s.call(where{topic: "t", partition: 0}, "list offsets", func(context.Context) error { ran = true; return nil }); err != nil || !ran {
		t.Fatalf("call after an interrupted one: %v (ran %v), want it sent", err, ran)
	}
}
