package logstore

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/partfs/partfs/internal/testutil"
	"github.com/partfs/partfs/vfs"
)

// TestBackgroundFailuresReported: a retention whose rename fails and a
// flush whose fsync fails are each logged with task, topic, partition and
// file and reported to OnBackgroundError.
func TestBackgroundFailuresReported(t *testing.T) {
	for _, tc := range []struct {
		task, cfg string
		inj       *vfs.NthInjector
		file      string
	}{
		{"retention", "retention.ms", &vfs.NthInjector{Op: vfs.OpRename, N: 1, Err: syscall.EIO, Persist: true, Filter: ".log"}, ".log"},
		{"flush", "flush.ms", &vfs.NthInjector{Op: vfs.OpSync, N: 1, Err: syscall.EIO, Persist: true, Filter: ".log"}, ".log"},
	} {
		t.Run(tc.task, func(t *testing.T) {
			base, c := vfs.NewCrashFS(), newClock()
			gate := &gatedInjector{inner: tc.inj}
			lg := testutil.NewLogger()
			opt := testOptions(vfs.NewErrorFS(base, gate), c, map[string]string{"segment.bytes": "2000", tc.cfg: "1000"})
			opt.Logger = lg.Entry
			var got []string
			opt.OnBackgroundError = func(task, topic string, partition int, err error) {
				got = append(got, fmt.Sprint(task, " ", topic, " ", partition))
			}
			st, l := openAt(t, "/data", opt)
			for i := 0; i < 40; i++ {
				rs := recs(1, "v", 0)
				rs[0].Value = make([]byte, 100)
				if _, err := l.Append(rs); err != nil {
					t.Fatal(err)
				}
			}
			c.Add(2 * time.Second)
			gate.on = true
			if err := st.RunMaintenance(true, false); err == nil {
				t.Fatal("maintenance did not fail")
			}
			gate.on = false
			if len(got) == 0 || got[0] != tc.task+" t 0" {
				t.Errorf("reported %v, want %q first", got, tc.task+" t 0")
			}
			line := ""
			for _, s := range strings.Split(lg.Buf.String(), "\n") {
				if strings.Contains(s, "background work failed") && strings.Contains(s, "task="+tc.task) {
					line = s
					break
				}
			}
			if !strings.Contains(line, "topic=t") || !strings.Contains(line, "partition=0") || !strings.Contains(line, "file=/data/t-0/") ||
				!strings.Contains(line, tc.file) {
				t.Errorf("log line %q lacks topic, partition or file:\n%s", line, lg.Buf)
			}
			st.Close()
		})
	}
}

// gatedInjector passes operations to inner only while on.
type gatedInjector struct {
	inner vfs.Injector
	on    bool
}

func (g *gatedInjector) MaybeFail(op vfs.Op, name string) (bool, error) {
	if !g.on {
		return false, nil
	}
	return g.inner.MaybeFail(op, name)
}
