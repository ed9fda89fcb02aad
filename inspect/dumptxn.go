package inspect

import (
	"fmt"
	"io"
	"os"

	"github.com/partfs/partfs/index"
)

// DumpTxnIndex prints the aborted transactions of a .txnindex file, one
// per line as kafka-dump-log does ("version: V producerId: P firstOffset:
// F lastOffset: L lastStableOffset: S"), or with JSON one object each. A
// damaged tail (an unknown version, a partial entry) is an error after the
// entries before it.
func DumpTxnIndex(w io.Writer, file string, opt DumpOptions) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read transaction index: %w", err)
	}
	entries, perr := index.ParseTxnIndex(data, file)
	for _, e := range entries {
		format := "version: %d producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n"
		if opt.JSON {
			format = `{"version":%d,"producer_id":%d,"first_offset":%d,"last_offset":%d,"last_stable_offset":%d}` + "\n"
		}
		if _, err := fmt.Fprintf(w, format, e.Version, e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset); err != nil {
			return err
		}
	}
	return perr
}
