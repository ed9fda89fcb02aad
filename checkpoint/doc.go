// Package checkpoint owns Kafka's small text files of a log directory,
// byte for byte as a broker writes them (kafka-format.md §5):
//
//	recovery-point-offset-checkpoint,   "0\n" version, "<count>\n",
//	log-start-offset-checkpoint, ...    then "<topic> <partition> <offset>\n" lines
//	leader-epoch-checkpoint             "0\n<count>\n<epoch> <startOffset>\n..."
//	partition.metadata                  "version: 0\ntopic_id: <base64url UUID>" (no newline)
//	meta.properties                     "#\n#<date>\n" then key=value lines
//	.kafka_cleanshutdown                {"version":0,"brokerEpoch":N}
//
// Every write goes through vfs.WriteFileDurable (temp file, fsync, rename,
// directory fsync). Parse errors are *record.CorruptionError naming the
// file and the line, and match record.ErrCorruption.
package checkpoint

// currentCheckpointVer is the version line of the offset and epoch files.
const currentCheckpointVer = 0
