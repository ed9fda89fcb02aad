// Package compact owns log compaction: Kafka's log cleaner
// (docs/kafka-format.md §6) working on logstore's public API. It chooses the
// filthiest compacted log, builds a fixed-size offset map over the dirty
// range, rewrites the cleanable segments group by group keeping only the
// latest record of each key, and swaps the cleaned segments in through
// logstore (.cleaned -> .swap -> final names), then advances the
// cleaner-offset-checkpoint. It runs once (`partfs compact`) or in the
// background of a mount (Start).
//
// # The offset map and its hash
//
// OffsetMap is Kafka's SkimpyOffsetMap in shape: a fixed array of 24-byte
// slots (a 128-bit key hash and an 8-byte offset), open addressing, filled
// to a load factor of 0.9, allocated once and reused. Kafka uses MD5 as the
// 128-bit hash; here the two 64-bit halves are hash/maphash of the key under
// two independent random seeds chosen when the map is made. maphash runs
// the runtime's AES-based hash (on amd64) at several GB/s, where MD5 would
// cost more than all the rest of a cleaning pass for short keys.
//
// Why this is collision-safe enough: a collision would make the cleaner
// treat two keys as one and drop the older one's latest value. For n keys in
// one round the chance of any 128-bit collision is about n²/2¹²⁹; at the
// default 128 MiB map (5.6 million keys) that is ~5e-26 per round, far below
// the rate of undetected disk errors. Even if the two seeded halves were
// only as good as one 64-bit hash, the chance would be n²/2⁶⁵ ≈ 9e-7 per full
// round. Unlike MD5, whose collisions can be manufactured, the seeds are
// secret and new for every map, so producers cannot craft colliding keys.
//
// # The rules (docs/kafka-format.md §6)
//
// Choosing: the filthiest compacted log whose dirty ratio exceeds
// min.cleanable.dirty.ratio, or whose oldest dirty batch is past
// max.compaction.lag.ms, is cleaned over [first dirty offset, first
// uncleanable offset): never the active segment, never a segment whose
// largest timestamp is younger than min.compaction.lag.ms.
//
// A round builds the offset map from the dirty records as a consumer reads
// them (aborted transactions never become a key's latest), until the map is
// full; then every segment from the log start below the map's end is
// rewritten, grouped by segment.bytes, segment.index.bytes and a 32-bit
// offset range, one cleaned segment per group named by its first base
// offset, swapped in through logstore; the cleaner-offset-checkpoint then
// moves to the map's end and the next round continues from there.
//
// Per record: kept if past the map's end; else kept only with a key, as the
// key's latest, and (tombstones) while its delete horizon has not passed.
// Kept records keep offsets and timestamps; a batch keeps its base and last
// offset, producer fields and codec (recompressed), and is copied byte for
// byte when nothing in it changes. The first cleaning that keeps a V2
// tombstone sets the batch's delete horizon (attribute bit 6, base
// timestamp = now + delete.retention.ms); a later one drops it.
//
// Transactions, as Kafka's CleanedTransactionMetadata and
// checkBatchRetention: a batch of an aborted transaction (the .txnindex
// entries of the round's segments say which) loses all its records; an
// ABORT marker stays while a batch of its transaction was still read in the
// round, and its transaction then goes to the cleaned segment's .txnindex;
// a marker with nothing left of its transaction (a COMMIT whose batches
// were not read in the round) gets a delete horizon the first time and
// goes once it has passed. A batch left without records goes, except the
// last batch of a producer still active (its last data batch, or the
// marker of its latest epoch; a producer expires producer.id.expiration.ms,
// one day, after its last batch unless a transaction of it is open) and
// the batch ending the round, which stay as empty headers (Kafka's
// writeEmptyHeader). The producers' last batches are read from the batch
// headers of the whole log each round (partfs keeps no producer
// snapshots).
//
// Where this differs from Kafka, on purpose: a V0/V1 message or compressed
// wrapper is kept whole while any record in it survives (partfs never
// writes the legacy formats). Batches are rebuilt with record.Encoder, so
// recompressed snappy is xerial-framed as Kafka's Java client writes it.
//
// # Memory
//
// The map is the only memory that grows with the data: 24 bytes per slot,
// 24/0.9 ≈ 26.7 bytes per distinct key at the fill limit. Its memory
// (log.cleaner.dedupe.buffer.size) is allocated once, but a round starts
// with only 16384 slots in use and grows them ×4 (then to all of them) when
// they fill, building that round's map again from its first offset: the
// pages touched follow the number of keys (a log of 100,000 keys uses about
// 6 MiB, which stays in the CPU caches, instead of 128 MiB of random
// accesses), at the price of at most a third more map work when every key
// is distinct. Everything else (one batch's records, the output buffer) is
// bounded by max.message.bytes.
package compact
