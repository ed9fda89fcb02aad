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
// # Memory
//
// The map is the only memory that grows with the data: 24 bytes per slot,
// 24/0.9 ≈ 26.7 bytes per distinct key at the fill limit. Everything else
// (one batch's records, the output buffer) is bounded by max.message.bytes.
package compact
