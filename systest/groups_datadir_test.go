package systest

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/partfs/partfs/internaltopic"
)

// TestDataDirGroupsReset: in a data directory, `echo TOPIC PARTITION
// OFFSET > .groups/G` appends one offset commit to the __consumer_offsets
// partition Kafka chooses for G and to no other; after unmounting,
// `partfs dump --offsets-decoder` of that segment reads it back as Kafka's
// key version 1 and value version 3, and a remount describes the group.
func TestDataDirGroupsReset(t *testing.T) {
	d := startFresh(t)
	const parts, group = 5, "mygroup"
	d.sh("mkdir __consumer_offsets orders && for i in $(seq 1 4); do mkdir __consumer_offsets/$i; done && seq 1 10 >> orders/0/log")
	d.sh("echo 'orders 0 4' > .groups/" + group)
	want := group + " orders 0 4 10 6\n"
	if got := d.sh("awk 'NR==2 {print $1, $2, $3, $4, $5, $6}' .groups/" + group); got != want {
		t.Fatalf("describe after the reset: %q, want %q", got, want)
	}
	d.stop()
	p := internaltopic.GroupPartition(group, parts)
	for i := range parts {
		seg := filepath.Join(d.data, fmt.Sprintf("__consumer_offsets-%d", i), "00000000000000000000.log")
		out, _, _ := runPartfsSplit("dump", "--offsets-decoder", seg)
		has := strings.Contains(out, `key: {"version":1,"group":"mygroup","topic":"orders","partition":0} payload: {"version":3,"offset":4,"leaderEpoch":-1,"metadata":""`)
		if has != (i == p) {
			t.Errorf("partition %d (the group's: %d) holds the commit: %v\n%s", i, p, has, out)
		}
	}
	d.start()
	if got := d.sh("awk 'NR==2 {print $1, $2, $3, $4, $5, $6}' .groups/" + group); got != want {
		t.Fatalf("describe after a remount: %q, want %q", got, want)
	}
	d.stop()
}
