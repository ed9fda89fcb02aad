package fs

import (
	"strings"
	"testing"

	"github.com/partfs/partfs/partlog"
	"github.com/partfs/partfs/partlog/memlog"
	"github.com/partfs/partfs/record"
)

// panicky is a store whose partition logs panic on Read.
type panicky struct{ *memlog.Store }

type panickyLog struct{ partlog.Log }

func (p panicky) Partition(topic string, n int) (partlog.Log, error) {
	l, err := p.Store.Partition(topic, n)
	if err != nil {
		return nil, err
	}
	return panickyLog{l}, nil
}

func (panickyLog) Read(partlog.Segment, int64, func(*record.Record) bool) error {
	var m map[string]int
	m["boom"]++ // nil map write: a real runtime panic
	return nil
}

// TestHandlerPanicIsEIO: a panic in a handler is logged and answered with
// EIO; the mount keeps serving.
func TestHandlerPanicIsEIO(t *testing.T) {
	st := memlog.New(memlog.Options{})
	m := mountStore(t, panicky{st})
	m.Sh("mkdir t && echo a >> t/0/log")
	if _, err := m.Try("cat t/0/log"); err == nil || !strings.Contains(err.Error(), "Input/output error") {
		t.Fatalf("cat with a panicking backend: %v", err)
	}
	if !strings.Contains(m.log.Buf.String(), "handler panicked") {
		t.Fatalf("no log line for the panic:\n%s", m.log.Buf.String())
	}
	if got := m.Sh("ls t"); got != "0\nconfig\n" {
		t.Fatalf("mount no longer serves: %q", got)
	}
}

// TestTopicNamesThroughTheAPI: names the kernel cannot pass (with / or
// NUL) and others Kafka refuses are invalid for the store and for fs.
func TestTopicNamesThroughTheAPI(t *testing.T) {
	st := memlog.New(memlog.Options{})
	for _, name := range []string{"a/b", "a\x00b", "a b", strings.Repeat("x", 250), "", ".", ".."} {
		if err := st.CreateTopic(name); err == nil {
			t.Errorf("CreateTopic(%q) succeeded", name)
		}
	}
	for _, name := range []string{strings.Repeat("x", 249), "a.b_c-D9"} {
		if err := st.CreateTopic(name); err != nil {
			t.Errorf("CreateTopic(%q): %v", name, err)
		}
	}
}
