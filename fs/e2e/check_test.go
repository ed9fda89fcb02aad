package e2e

import (
	"strings"
	"testing"

	"github.com/partfs/partfs/inspect"
)

// TestCheckLiveMount: partfs check of a data directory that is mounted
// reports no damage: the active segments' preallocated zero index tails
// are what Kafka's loader accepts.
func TestCheckLiveMount(t *testing.T) {
	e := newEnv(t, mountOpt{})
	e.Sh("mkdir a b c && echo segment.bytes=20000 >> a/config && mkdir a/1 a/2 && seq 1 20000 >> a/0/log && seq 1 10 >> a/1/log && echo x >> b/0/log")
	var out strings.Builder
	damaged, err := inspect.Check(&out, e.data)
	if err != nil || damaged || strings.Contains(out.String(), "DAMAGE") {
		t.Errorf("check of a live mount: damaged %v, %v:\n%s", damaged, err, out.String())
	}
}
