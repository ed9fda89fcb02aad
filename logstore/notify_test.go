package logstore

import (
	"testing"

	"github.com/partfs/partfs/vfs"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Changed is closed by the next append after it was handed out, also when
// earlier appends went unwatched; a new channel is open until the next.
func TestChangedClosesAtTheNextAppend(t *testing.T) {
	st, l := openTest(t, vfs.NewCrashFS(), newClock(), nil)
	defer st.Close()
	l.Append(recs(2, "a", 0)) // unwatched
	ch := l.Changed()
	if closed(ch) {
		t.Fatal("Changed closed before an append")
	}
	if ch2 := l.Changed(); ch2 != ch {
		t.Fatal("two calls without an append gave different channels")
	}
	l.Append(recs(1, "b", 0))
	if !closed(ch) {
		t.Fatal("append did not close Changed")
	}
	ch = l.Changed()
	if closed(ch) {
		t.Fatal("new Changed channel already closed")
	}
	l.Append(recs(1, "c", 0))
	l.Append(recs(1, "d", 0))
	if !closed(ch) {
		t.Fatal("append did not close the new Changed")
	}
}
