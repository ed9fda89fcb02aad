package logstore

import (
	"path/filepath"

	"github.com/partfs/partfs/kafkaname"
)

// Names partfs adds to a data directory; Kafka's own are in kafkaname.
// TopicsFile holds the topic configuration set through the mount.
const (
	sidecarSuffix       = ".partfs"            // a segment's position sidecar
	TopicsFile          = "partfs-topics.json" // the root's topic configuration
	segmentsSidecarName = "logstore-segments"  // the sidecar of segment IDs
)

func segmentPath(dir string, base int64, suffix string) string {
	return filepath.Join(dir, kafkaname.SegmentFile(base, suffix))
}
