package mountinfo

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRead reads each mount's device, point, type and source, with the
// octal escapes of spaces undone, and passes over lines it cannot read.
func TestRead(t *testing.T) {
	table := filepath.Join(t.TempDir(), "mountinfo")
	text := "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n" +
		"garbage\n" +
		`40 22 0:50 / /tmp/my\040mnt rw,nosuid shared:9 - fuse.partfs /srv/my\040data rw,user_id=0` + "\n"
	if err := os.WriteFile(table, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Read(table)
	if err != nil {
		t.Fatal(err)
	}
	want := []Mount{{"8:1", "/", "ext4", "/dev/sda1"}, {"0:50", "/tmp/my mnt", "fuse.partfs", "/srv/my data"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Fatal("a missing table read without an error")
	}
}
