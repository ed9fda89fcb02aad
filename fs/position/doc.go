// Package position is the byte-position engine of the filesystem's
// rendered views: it renders a partition's records as the two streams
// (plain lines and JSON lines, Kind), keeps each segment's range of those
// streams fixed as the log grows, rolls, is retained or compacted
// (Layout), finds the record at a byte position and the position of a
// record (Cursor), measures appended records without rendering them
// (Measurement), keeps its bookkeeping in the partition's position sidecar
// (sidecar.go draws its format), and follows a partition's new records
// (Tailer). It sees the log only through package partlog and imports no
// FUSE package; the stable-position rules are in package fs's doc.
package position
