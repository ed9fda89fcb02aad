package systest

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/partfs/partfs/internal/testutil"
)

// killBroker is the closest kfake has to killing a broker: its listener
// closes (RemoveNode, which also moves its partitions' leadership to the
// brokers left), and every connection it still has is closed at its next
// request. kfake keeps one copy of the data that all its brokers serve, so
// what a real failover can lose (an unclean election) is not modelled;
// what is tested is the client's side: the requests in flight to the dead
// leader, the retry on the new one, and the idempotent sequence.
func killBroker(t *testing.T, c *kfake.Cluster, node int32, dead *[3]atomic.Bool) {
	t.Helper()
	dead[node].Store(true)
	if err := c.RemoveNode(node); err != nil {
		t.Fatalf("remove broker %d: %v", node, err)
	}
}

// TestKafkaLeaderKilled: three kfake brokers, a topic whose metadata lists
// three replicas; one write() per line through the mount while the
// partition's leader is killed, and then the new leader too, each while
// a write is in flight or about to be. Every
// write() is acknowledged and none waits longer than --kafka-timeout; kcat
// and the mount read every line once, in order; a reader of the mount
// keeps reading throughout.
func TestKafkaLeaderKilled(t *testing.T) {
	testutil.Kcat(t)
	c, addr := kafkaCluster(t, kfake.NumBrokers(3))
	var dead [3]atomic.Bool
	c.Control(func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if n := c.CurrentNode(); n >= 0 && n < 3 && dead[n].Load() {
			return nil, errors.New("broker killed"), true // closes the connection
		}
		return nil, nil, false
	})
	const timeout = 5 * time.Second
	d := kafkaMount(t, addr, "", "--kafka-timeout", timeout.String())
	d.sh("mkdir t")
	if md := kcat(t, addr, "", "-L", "-t", "t"); !strings.Contains(md, "replicas: 0,1,2") && !strings.Contains(md, "replicas: 1,2,0") &&
		!strings.Contains(md, "replicas: 2,0,1") {
		t.Fatalf("the topic does not have three replicas:\n%s", md)
	}
	f, err := os.OpenFile(d.path("t", "0", "log"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stopReads := make(chan struct{})
	readErrs := make(chan error, 1)
	var reads atomic.Int64
	go func() { // a reader of the mount throughout
		defer close(readErrs)
		for {
			select {
			case <-stopReads:
				return
			default:
			}
			out, err := testutil.Sh(d.mnt, "cat t/0/log", 2*timeout)
			if err != nil {
				readErrs <- fmt.Errorf("cat during the kills: %v %q", err, out)
				return
			}
			for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if l != "" && l != fmt.Sprint(i+1) {
					readErrs <- fmt.Errorf("cat during the kills: line %d is %q", i+1, l)
					return
				}
			}
			reads.Add(1)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	const n = 600
	var slowest time.Duration
	var acked atomic.Int64
	writeErr := make(chan error, 1)
	go func() { // one write() per line; the kills land while writes are in flight
		defer close(writeErr)
		for i := 1; i <= n; i++ {
			start := time.Now()
			if _, err := fmt.Fprintf(f, "%d\n", i); err != nil {
				writeErr <- fmt.Errorf("write %d: %v", i, err)
				return
			}
			slowest = max(slowest, time.Since(start))
			acked.Store(int64(i))
		}
	}()
	var killed []int32
	deadline := time.Now().Add(2 * time.Minute)
	for _, at := range []int64{150, 350} {
		if !waitAcked(&acked, at, writeErr, deadline) {
			break // the writer stopped or stalled: its error is reported below
		}
		leader := c.LeaderFor("t", 0)
		killBroker(t, c, leader, &dead)
		killed = append(killed, leader)
	}
	select {
	case err := <-writeErr:
		if err != nil {
			t.Fatalf("after killing brokers %v: %v\n%s", killed, err, tail(d.log.String(), 3000))
		}
	case <-time.After(time.Until(deadline)):
		t.Fatalf("after killing brokers %v the writes stalled at %d of %d\n%s", killed, acked.Load(), n, tail(d.log.String(), 3000))
	}
	close(stopReads)
	if err := <-readErrs; err != nil {
		t.Error(err)
	}
	if slowest > timeout {
		t.Errorf("the slowest write() took %v, timeout %v", slowest, timeout)
	}
	var want strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if got := kcat(t, addr, "", "-C", "-t", "t", "-p", "0", "-e", "-q"); got != want.String() {
		t.Fatalf("after killing brokers %v kcat reads %d lines:\n%s", killed, strings.Count(got, "\n"), tail(got, 300))
	}
	if got := d.sh("cat t/0/log"); got != want.String() {
		t.Fatalf("the mount reads %d lines", strings.Count(got, "\n"))
	}
	t.Logf("killed brokers %v (the leader each time); slowest write() %v; %d full reads during the writes", killed, slowest, reads.Load())
	f.Close()
	d.stop()
}

// waitAcked waits until the writer has acknowledged at lines, reporting false
// when the writer failed first (its error stays in writeErr for the caller) or
// the deadline passed.
func waitAcked(acked *atomic.Int64, at int64, writeErr chan error, deadline time.Time) bool {
	for acked.Load() < at {
		if len(writeErr) > 0 || time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}
