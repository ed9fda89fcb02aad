package testutil

import (
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CountRequests counts, from now on, the requests of kind key the cluster
// receives; the cluster answers them as it would have.
func CountRequests(c *kfake.Cluster, key kmsg.Key) *atomic.Int64 {
	n := new(atomic.Int64)
	c.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		n.Add(1)
		return nil, nil, false
	})
	return n
}

// SlowRequests makes the cluster answer each request of kind key, from now
// on, only after wait.
func SlowRequests(c *kfake.Cluster, key kmsg.Key, wait time.Duration) {
	c.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		time.Sleep(wait)
		return nil, nil, false
	})
}

// UnansweredRequests makes the cluster answer no request of kind key from
// now on.
func UnansweredRequests(c *kfake.Cluster, key kmsg.Key) {
	c.ControlKey(int16(key), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		return nil, nil, true
	})
}
