// Package mountinfo reads the kernel's mount table in the format of
// /proc/self/mountinfo (proc(5)): each mount's device, mount point,
// filesystem type and source, octal escapes undone. It reads the table
// only; it never stats a mount point (a dead FUSE mount would hang it).
package mountinfo

import (
	"os"
	"strconv"
	"strings"
)

// Self is the mount table of the calling process.
const Self = "/proc/self/mountinfo"

// Mount is one line of the table.
type Mount struct {
	Dev    string // MAJOR:MINOR of the mounted filesystem
	Point  string // the mount point
	FSType string // e.g. "fuse.partfs"
	Source string
}

// Read returns the mounts of the table at path in its order: of two
// mounts on one point, the later lies over the earlier.
func Read(path string) ([]Mount, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Mount
	for line := range strings.Lines(string(b)) {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPER
		pre, post, found := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !found || len(f) < 5 || len(g) < 2 {
			continue
		}
		out = append(out, Mount{Dev: f[2], Point: unescape(f[4]), FSType: g[0], Source: unescape(g[1])})
	}
	return out, nil
}

// unescape undoes the octal escapes (\040 for a space) of a field.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
