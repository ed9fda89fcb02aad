package logstore

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/record"
	"github.com/partfs/partfs/vfs"
	"go.uber.org/goleak"
)

// TestConcurrentAppendReadRetention runs writers, readers, syncs and
// retention at once (run with -race): readers always see contiguous
// offsets with the values written for them.
func TestConcurrentAppendReadRetention(t *testing.T) {
	defer goleak.VerifyNone(t)
	fs, c := vfs.NewCrashFS(), newClock()
	opt := testOptions(fs, c, map[string]string{"segment.bytes": "4000", "retention.bytes": "20000",
		"index.interval.bytes": "300", "segment.index.bytes": "4096", "file.delete.delay.ms": "0"})
	opt.NoBackground = false
	opt.FlushInterval = 5e6 // 5 ms
	opt.RetentionInterval = 1
	st, l := openAt(t, "/data", opt)
	defer st.Close()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex // one append at a time keeps values = offsets simple
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				mu.Lock()
				end := l.EndOffset()
				rs := make([]record.Record, 1+i%5)
				for j := range rs {
					rs[j].Value = []byte(fmt.Sprintf("o-%d-%s", end+int64(j), strings.Repeat("x", 30)))
				}
				_, err := l.Append(rs)
				mu.Unlock()
				if err != nil {
					t.Error(err)
					return
				}
				if i%50 == 0 {
					l.Sync()
				}
			}
		}()
	}
	for r := 0; r < 2; r++ {
		testutil.Every(&wg, stop, l.Changed, func() bool {
			segs, release := l.Segments()
			prev := int64(-1)
			for _, s := range segs {
				err := l.Read(s, s.Base, func(rec *record.Record) bool {
					if prev >= 0 && rec.Offset != prev+1 {
						t.Errorf("offset %d after %d", rec.Offset, prev)
					}
					if !strings.HasPrefix(string(rec.Value), fmt.Sprintf("o-%d-", rec.Offset)) {
						t.Errorf("offset %d has value %q", rec.Offset, rec.Value)
					}
					prev = rec.Offset
					return true
				})
				if err != nil {
					t.Error(err)
				}
			}
			release()
			l.Stats()
			l.OffsetForTime(c.Now().UnixMilli())
			return true
		})
	}
	for i := 0; i < 20; i++ {
		l.ApplyRetention()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	// writers finish, then the readers are stopped
	for l.EndOffset() < 2*300*3 {
		l.ApplyRetention()
		select {
		case <-done:
		default:
			continue
		}
		break
	}
	close(stop)
	<-done
	l.ApplyRetention()
	if l.StartOffset() == 0 {
		t.Fatal("retention deleted nothing")
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}
