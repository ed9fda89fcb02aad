package devcluster

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestStartListensWhereAsked: brokers listen on the host asked for, on
// consecutive ports from a fixed first port; bad addresses are refused.
func TestStartListensWhereAsked(t *testing.T) {
	var c *kfake.Cluster
	var port int
	for try := 0; c == nil; try++ { // a free port and its successor, retried if another process took one
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		c, err = Start(Options{Listen: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Brokers: 2, Topics: []string{"t"}})
		if err != nil && try == 4 {
			t.Fatalf("ports %d and %d: %v", port, port+1, err)
		}
	}
	defer c.Close()
	want := "127.0.0.1:" + strconv.Itoa(port) + " 127.0.0.1:" + strconv.Itoa(port+1)
	if got := strings.Join(c.ListenAddrs(), " "); got != want {
		t.Fatalf("ListenAddrs %q, want %q", got, want)
	}
	for _, bad := range []string{"127.0.0.1", "127.0.0.1:x", "127.0.0.1:70000", "nosuchhost.invalid:0"} {
		if c, err := Start(Options{Listen: bad}); err == nil {
			c.Close()
			t.Errorf("Start(%q) succeeded", bad)
		}
	}
}
