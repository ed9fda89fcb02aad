package systest

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/partfs/partfs/internal/testutil"
)

// TestManyPartitionsKillAndStop: 160 partitions (opened, synced and
// closed on several goroutines) keep every acknowledged line through a
// SIGKILL and remount, then through clean stops with only some written
// in between, and through a SIGKILL and a stop right after starts (while
// partitions may still open in the background); partfs check finds the
// data directory clean.
func TestManyPartitionsKillAndStop(t *testing.T) {
	root := t.TempDir()
	data, mnt := root+"/data", root+"/mnt"
	d := startDaemon(t, data, mnt)
	const topics, parts = 8, 20
	for i := 0; i < topics; i++ {
		mkTopic(t, d, "t"+strconv.Itoa(i), parts)
	}
	want := map[string]string{}
	write := func(every int, word string) {
		for i := 0; i < topics; i++ {
			for p := 0; p < parts; p += every {
				path := d.path("t"+strconv.Itoa(i), strconv.Itoa(p), "log")
				line := fmt.Sprintf("%s %d/%d\n", word, i, p)
				appendFile(t, path, line)
				want[path] += line
			}
		}
	}
	check := func(when string) {
		t.Helper()
		for i := 0; i < topics; i++ {
			for p := 0; p < parts; p++ {
				path := d.path("t"+strconv.Itoa(i), strconv.Itoa(p), "log")
				if got := string(testutil.ReadFile(t, path)); got != want[path] {
					t.Fatalf("%s %s: %q, want %q", when, path, got, want[path])
				}
			}
		}
	}
	write(1, "one")
	d.kill9()
	d.restart()
	check("after SIGKILL")
	write(3, "two")
	d.stop()
	d.restart()
	check("after a clean stop")
	d.stop()
	d.restart()
	check("after a stop with nothing written")
	write(7, "three")
	d.kill9()
	d.restart()
	check("after a second SIGKILL")
	// partitions open in the background: writes right after a start that
	// recovers, a SIGKILL while others may still recover, a stop right
	// after a clean start
	d.kill9()
	d.restart()
	write(5, "four")
	d.kill9()
	d.restart()
	d.stop()
	d.restart()
	check("after a SIGKILL and a stop right after starts")
	d.stop()
	if out, code := runPartfs(t, "check", data); code != 0 {
		t.Fatalf("check after clean stop: %d\n%s", code, out)
	}
}
