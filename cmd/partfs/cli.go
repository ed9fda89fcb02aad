package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// parseArgs parses a command's arguments the GNU way: flags may come
// before, between and after the other arguments, and "--" ends the flags.
// Afterwards fl.Args() holds the other arguments in order. done reports
// that the command should exit with code: --help prints the command's
// usage to stdout (exit 0, so `partfs CMD --help | less` shows it); a bad
// flag is refused with one line and a hint on stderr (exit 2).
func parseArgs(fl *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, done bool) {
	usage := fl.Usage
	defer func() { fl.Usage = usage; fl.SetOutput(stderr) }()
	fl.Usage = func() {}
	fl.SetOutput(io.Discard)
	var rest []string
	for {
		err := fl.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fl.SetOutput(stdout)
			usage()
			return 0, true
		}
		if err != nil {
			return refuse(stderr, cmdName(fl), err.Error()), true
		}
		left := fl.Args()
		if n := len(args) - len(left); n > 0 && args[n-1] == "--" {
			rest = append(rest, left...)
			break
		}
		if len(left) == 0 {
			break
		}
		rest, args = append(rest, left[0]), left[1:]
	}
	_ = fl.Parse(append([]string{"--"}, rest...))
	return 0, false
}

// cmdName is the command a flag set parses for ("mount", "check", ...).
func cmdName(fl *flag.FlagSet) string { return strings.TrimPrefix(fl.Name(), "partfs ") }

// refuse prints what is wrong with a command line in one line, then where
// to find the usage, and returns the exit code of a usage error.
func refuse(stderr io.Writer, cmd, what string) int {
	fmt.Fprintf(stderr, "partfs %s: %s\nRun 'partfs %s --help' for usage.\n", cmd, what, cmd)
	return 2
}

// argCount says what is wrong when got arguments were given where the
// command takes names (all required), then optionally more ("" when the
// count is right). variadic allows more than len(names).
func argCount(got []string, variadic bool, names ...string) string {
	switch {
	case len(got) < len(names):
		return "missing " + strings.Join(names[len(got):], " and ")
	case len(got) > len(names) && !variadic && len(names) == 0:
		return fmt.Sprintf("unexpected argument %q (takes none)", got[0])
	case len(got) > len(names) && !variadic:
		return fmt.Sprintf("unexpected argument %q (want %s)", got[len(names)], strings.Join(names, " "))
	}
	return ""
}

// fusermountRE matches go-fuse's report of a failed fusermount, whose
// number is a raw wait status ("fusermount exited with code 256").
var fusermountRE = regexp.MustCompile(`fusermount exited with code (\d+)`)

// describeMountError puts a failed fusermount's wait status in words and
// drops the trailing newline go-fuse leaves in its errors.
func describeMountError(err error) error {
	m := fusermountRE.FindStringSubmatch(err.Error())
	if m == nil {
		if s := err.Error(); strings.HasSuffix(s, "\n") {
			return errors.New(strings.TrimRight(s, "\n"))
		}
		return err
	}
	n, _ := strconv.ParseUint(m[1], 10, 32)
	return fmt.Errorf("fusermount %s%s", waitStatusWords(syscall.WaitStatus(n)), fuseHint())
}

// waitStatusWords says how a child process ended.
func waitStatusWords(ws syscall.WaitStatus) string {
	switch {
	case ws.Exited():
		return fmt.Sprintf("failed with exit status %d", ws.ExitStatus())
	case ws.Signaled():
		return fmt.Sprintf("was killed by signal %d (%v)", int(ws.Signal()), ws.Signal())
	}
	return fmt.Sprintf("ended with wait status %#x", uint32(ws))
}

// fuseHint is what to check when fusermount refused a mount.
func fuseHint() string {
	if os.Geteuid() == 0 {
		return ""
	}
	return " (as a user other than root: /dev/fuse must be readable and writable by you, and --allow-other needs user_allow_other in /etc/fuse.conf)"
}
