package systest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestTestScriptInstallsTools: every program a test starts by name
// (exec.Command, needTool, exec.LookPath) or runs in a shell script is in
// test.sh's list of tools it installs, or is part of any Linux system.
func TestTestScriptInstallsTools(t *testing.T) {
	script, err := os.ReadFile("../test.sh")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b([a-z0-9]+):[a-z0-9.+-]+\b`).FindAllStringSubmatch(string(script), -1) {
		listed[m[1]] = true
	}
	base := map[string]bool{"bash": true, "sh": true, "go": true, "cat": true, "cp": true, "tail": true, "head": true,
		"dd": true, "umount": true, "mount": true, "id": true, "useradd": true, "userdel": true, "sed": true,
		"grep": true, "seq": true, "sort": true, "wc": true, "du": true, "ls": true, "truncate": true, "mv": true,
		"ln": true, "rm": true, "tee": true, "stat": true, "printf": true, "echo": true, "sleep": true, "kill": true,
		"setpriv": true, "runuser": true, "su": true, "fusermount3": true, "fusermount": true}
	started := regexp.MustCompile(`exec\.Command(?:Context)?\((?:ctx, )?"([a-z0-9_.-]+)"|needTool\(t, "([a-z0-9_.-]+)"\)|LookPath\("([a-z0-9_.-]+)"\)`)
	// Programs the shell scripts of tests run that a minimal system lacks.
	scripted := regexp.MustCompile(`\b(python3|jq|kcat|vim|nano|rsync|lz4|zstd|gzip|tar|bc|perl|xxd|strace|fuser)\b`)
	err = filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") || strings.HasSuffix(path, "testsh_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range started.FindAllStringSubmatch(string(b), -1) {
			tool := m[1] + m[2] + m[3]
			if !listed[tool] && !base[tool] {
				t.Errorf("%s starts %s, which test.sh does not install", path, tool)
			}
		}
		for _, s := range regexp.MustCompile("(?s)`[^`]*`|\"(?:[^\"\\\\\\n]|\\\\.)*\"").FindAllString(string(b), -1) {
			for _, m := range scripted.FindAllStringSubmatch(s, -1) {
				if !listed[m[1]] && strings.ContainsAny(s, " |;") {
					t.Errorf("%s runs %s in %.60q, which test.sh does not install", path, m[1], s)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
