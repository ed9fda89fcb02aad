package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
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

// TestInterruptedFirstLook: a remount's first look at a partition that
// is interrupted before the cluster told its offsets leaves the tiles'
// prints for the next look, which keeps them (the same stamps as before
// the remount, no line saying they were discarded).
func TestInterruptedFirstLook(t *testing.T) {
	c := cluster(t)
	cache := t.TempDir()
	want := printedTopic(t, c, cache, 10000)
	lg := testutil.NewLogger()
	s := open(t, c, func(o *Options) { o.CacheDir, o.Logger = cache, lg.Entry })
	l, err := s.Partition("t", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	segmentsOf(l.(*Log).WithContext(ctx))
	var got []uint64
	for _, sg := range segmentsOf(l) {
		got = append(got, sg.Stamp)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) || strings.Contains(lg.Buf.String(), "tile prints discarded") {
		t.Fatalf("after an interrupted first look: stamps %v, want %v\n%s", got, want, lg.Buf.String())
	}
}
