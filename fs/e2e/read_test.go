package e2e

import (
	"strings"
	"testing"
)

// TestMillionLines: a million lines of seq on the on-disk log read back
// with the everyday tools.
func TestMillionLines(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir t && seq 1 1000000 >> t/0/log")
	checks := []struct{ cmd, want string }{
		{"wc -l < t/0/log", "1000000\n"},
		{"sed -n 500000p t/0/log", "500000\n"},
		{"head -1 t/0/@offset/123456", "123457\n"},
		{"head -1 t/0/@offset/earliest", "1\n"},
		{"wc -c < t/0/@offset/latest", "0\n"},
		{"tail -1 t/0/log", "1000000\n"},
		{"cat t/0/@offset/999998..1000000", "999999\n1000000\n"},
		{"sed -n 3p t/0/log.jsonl | jq -c '[.offset,.value,.key]'", "[2,\"3\",null]\n"},
		{"grep -c . t/0/log.jsonl", "1000000\n"},
	}
	for _, c := range checks {
		if strings.Contains(c.cmd, "jq") && !haveTool("jq") {
			t.Log("jq not installed; skipping", c.cmd)
			continue
		}
		if got := e.Sh(c.cmd); got != c.want {
			t.Errorf("%s = %q, want %q", c.cmd, got, c.want)
		}
	}
	if got, want := e.Sh("md5sum < t/0/log"), e.Sh("seq 1 1000000 | md5sum"); got != want {
		t.Errorf("log differs from seq output")
	}
}
