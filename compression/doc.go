// Package compression holds the codecs of Kafka's type: their
// names and ids (the attribute bits of a batch or legacy message), and the
// framed compressors and bounded decompressors of a records area or legacy
// wrapper value, byte for byte as Kafka's Java client frames them (snappy
// in xerial chunks, LZ4 in Kafka's frame, gzip, zstd). The framing is drawn
// in docs/format-record.md. It imports nothing of partfs.
package compression
