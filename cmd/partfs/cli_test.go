package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestParseArgsGNU: flags may follow the other arguments, "--" ends the
// flags, --help goes to stdout, a bad flag is one line and a hint.
func TestParseArgsGNU(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		ro       bool
		n        int
		rest     string
		code     int
		done     bool
		stderr   string
		stdoutOK bool
	}{
		{args: []string{"data", "mnt", "--read-only"}, ro: true, rest: "data mnt"},
		{args: []string{"--read-only", "data", "mnt"}, ro: true, rest: "data mnt"},
		{args: []string{"data", "-n", "3", "mnt"}, n: 3, rest: "data mnt"},
		{args: []string{"data", "--", "--read-only"}, rest: "data --read-only"},
		{args: []string{"-", "x"}, rest: "- x"},
		{args: []string{"data", "--nosuch"}, code: 2, done: true,
			stderr: "partfs mount: flag provided but not defined: -nosuch\nRun 'partfs mount --help' for usage.\n"},
		{args: []string{"data", "--help"}, done: true, stdoutOK: true},
	} {
		fl := flag.NewFlagSet("partfs mount", flag.ContinueOnError)
		ro := fl.Bool("read-only", false, "")
		n := fl.Int("n", 0, "")
		fl.Usage = func() { fl.Output().Write([]byte("usage: partfs mount\n")) }
		var stdout, stderr bytes.Buffer
		code, done := parseArgs(fl, tc.args, &stdout, &stderr)
		if code != tc.code || done != tc.done || stderr.String() != tc.stderr || (stdout.Len() > 0) != tc.stdoutOK {
			t.Errorf("%q: code %d done %v stdout %q stderr %q", tc.args, code, done, stdout.String(), stderr.String())
			continue
		}
		if !done && (*ro != tc.ro || *n != tc.n || strings.Join(fl.Args(), " ") != tc.rest) {
			t.Errorf("%q: read-only %v n %d args %q", tc.args, *ro, *n, fl.Args())
		}
	}
}

func TestArgCount(t *testing.T) {
	for _, tc := range []struct {
		got      []string
		variadic bool
		names    []string
		want     string
	}{
		{nil, false, []string{"DATADIR", "MOUNTPOINT"}, "missing DATADIR and MOUNTPOINT"},
		{[]string{"d"}, false, []string{"DATADIR", "MOUNTPOINT"}, "missing MOUNTPOINT"},
		{[]string{"d", "m", "x"}, false, []string{"DATADIR", "MOUNTPOINT"}, `unexpected argument "x" (want DATADIR MOUNTPOINT)`},
		{[]string{"s", "d", "t-0"}, true, []string{"SRC", "DST"}, ""},
		{[]string{"x"}, false, nil, `unexpected argument "x" (takes none)`},
	} {
		if got := argCount(tc.got, tc.variadic, tc.names...); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.got, got, tc.want)
		}
	}
}

// TestDescribeMountError: a failed fusermount's raw wait status is put in
// words, without go-fuse's trailing newline.
func TestDescribeMountError(t *testing.T) {
	got := describeMountError(errors.New("fusermount exited with code 256\n")).Error()
	if !strings.HasPrefix(got, "fusermount failed with exit status 1") || strings.Contains(got, "\n") || strings.Contains(got, "256") {
		t.Errorf("got %q", got)
	}
	if got := waitStatusWords(syscall.WaitStatus(9)); got != "was killed by signal 9 (killed)" {
		t.Errorf("signal: %q", got)
	}
	if got := describeMountError(errors.New("no such device\n")).Error(); got != "no such device" {
		t.Errorf("got %q", got)
	}
}

// TestPartfsMountAt finds a live partfs mount on a directory in a mount
// table, with escaped spaces, and not other filesystems' mounts.
func TestPartfsMountAt(t *testing.T) {
	dir := t.TempDir()
	mnt := filepath.Join(dir, "my mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	esc := strings.ReplaceAll(mnt, " ", `\040`)
	table := filepath.Join(dir, "mountinfo")
	write := func(s string) {
		if err := os.WriteFile(table, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n" +
		"40 22 0:50 / " + esc + " rw,nosuid,nodev shared:9 - fuse.partfs /srv/my\\040data rw,user_id=0\n")
	if src, ok := partfsMountAt(mnt, table); !ok || src != "/srv/my data" {
		t.Errorf("partfs mount: %q %v", src, ok)
	}
	if _, ok := partfsMountAt(dir, table); ok {
		t.Error("the parent taken for a mount point")
	}
	write("40 22 0:50 / " + esc + " rw - fuse.sshfs host:/x rw\n")
	if _, ok := partfsMountAt(mnt, table); ok {
		t.Error("another FUSE filesystem taken for partfs")
	}
}
