// Package salvage copies a damaged data directory keeping every valid
// batch (`partfs salvage`). Kafka's recovery keeps a segment only up to its
// first bad batch; salvage reads past a corrupt or torn region instead: it
// re-synchronises on the next position where a whole batch parses, its CRC
// matches and its records decode, with offsets above the last batch kept
// and inside its segment. Each skipped region is reported (file, positions,
// offsets lost). The kept batches are written, byte for byte, to segments
// of the same names in the destination; then the destination is opened
// with logstore, whose recovery from offset 0 rebuilds every index, and
// closed cleanly (checkpoints, clean-shutdown marker), so that it passes
// `partfs check` and mounts.
//
// Salvage reads one source segment at a time into memory and never writes
// the source. Symbolic links in the source are not followed.
package salvage
