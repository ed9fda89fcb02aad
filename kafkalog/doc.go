// Package kafkalog is the partlog backend of a running Kafka cluster: the
// cluster's topics, partitions and topic configurations, read and written
// over the Kafka protocol with franz-go (kgo for connections, kadm for the
// admin calls), so that fs/ serves the same tree as for a data directory.
//
// It owns the client side of the protocol that the tree needs: metadata
// (leaders and topic IDs, refreshed on a leader change), fetches decoded by
// package record with read_committed filtering (control batches and the
// response's aborted transactions; what an answer holds past the tile
// it was fetched for starts the next tile's Read), ListOffsets for earliest, latest, max
// and timestamps, DescribeLogDirs for sizes, DescribeConfigs and
// IncrementalAlterConfigs (validate-only first), CreateTopics and
// CreatePartitions, and an idempotent producer of its own: one appender per
// partition encodes each append as record batches (the topic's
// compression.type, at most max.message.bytes each), stamps them with its
// producer ID, epoch and sequence, and sends one batch at a time to the
// leader with acks=all, resending the same bytes after a leader change or a
// lost answer so that the broker drops a duplicate. Every call is bounded
// by Options.Timeout, and the calls made through a Log of WithContext (one
// request of the filesystem) all by one deadline, Options.Timeout from its
// start; a call that runs out fails with partlog.ErrTimeout naming the
// broker, topic and partition.
//
// # Positions
//
// A cluster has offsets, not segment files. A partition is presented as
// segments that are fixed tiles of TileOffsets offsets: tile k holds
// offsets [k*TileOffsets, (k+1)*TileOffsets) that are at or above the
// log start offset. Each tile has a slot on a fixed lattice,
// Base*SlotBytesPerOffset bytes into every rendering (partlog.Segment.Slot):
// fs places a tile right after its predecessor, which it reads when it
// has not rendered it whole, up to a bounded number of tiles per
// placement, and at its slot past those, so placing any tile (and so
// st_size, `tail`, `dd skip=`, `@offset/N`) reads a bounded number of
// tiles of records, whatever the partition's length. The space between a tile's
// rendered end and the next tile's start is a gap, as compaction leaves
// in a local log. fs keeps where it placed each tile in sidecars, which
// this package stores in the cache directory (one file per partition and
// name), so positions hold across remounts. The cluster compacts and
// deletes records while nothing is mounted, with no trace in a tile's
// offsets (partlog.RewritesUnseen): after a remount fs renders again a
// tile this package has no prints of (Stamp 0). The prints of the
// tiles read from their first offset (below) are kept in the cache
// directory too (printcache.go) and confirmed against the cluster at the
// first look at the partition after a remount; a tile with prints has
// a Stamp, fs keeps what it rendered of it, and the first read from its
// first offset (or, through its kept headers, from inside it) checks it
// as within a mount: a tile rewritten in the meantime gets a new ID and
// its records close up inside its range; no other tile moves. A
// tile's ID changes when
// the log start offset moves into it (retention), when an append to it
// did not land as one run, and when a read from the tile's first offset
// finds its batches changed (compaction inside it): each such read hashes
// the headers (base offset, last offset, CRC) of the batches it fetches
// and compares the prefixes with the marks earlier reads left, at no
// extra fetch; and when a read from inside the tile (a reader placed
// at a position there) meets, as the first batch at or after its offset,
// another batch than the one a read from the tile's first offset met
// there (each such read keeps the headers it met). A tile's Size is the number of its offsets below the log
// end.
package kafkalog
