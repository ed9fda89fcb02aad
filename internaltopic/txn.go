package internaltopic

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnStates are TransactionState's names by their stored byte.
var txnStates = []string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

func txnStateName(s int8) string {
	if s >= 0 && int(s) < len(txnStates) {
		return txnStates[s]
	}
	return "Unknown"
}

func decodeTxn(key, value []byte) (Decoded, error) {
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return Decoded{}, errorf("transaction metadata key: %v", err)
	}
	d := Decoded{Type: "transaction_metadata", Key: Object{{"version", k.Version}, {"transactionalId", k.TransactionalID}}}
	if value == nil {
		return d, nil
	}
	var v kmsg.TxnMetadataValue
	if err := readValue("transaction metadata", value, &v, &v.Version, 1); err != nil {
		return Decoded{}, err
	}
	parts := make([]any, 0, len(v.Topics))
	for _, t := range v.Topics {
		parts = append(parts, Object{{"topic", t.Topic}, {"partitionIds", int32s(t.Partitions)}})
	}
	o := Object{{"version", v.Version}, {"producerId", v.ProducerID}, {"producerEpoch", v.ProducerEpoch},
		{"transactionTimeoutMs", v.TimeoutMillis}, {"state", txnStateName(int8(v.State))},
		{"transactionPartitions", parts},
		{"transactionLastUpdateTimestampMs", v.LastUpdateTimestamp},
		{"transactionStartTimestampMs", v.StartTimestamp}}
	if v.Version >= 1 {
		o = append(o, Field{"previousProducerId", v.PreviousProducerID}, Field{"nextProducerId", v.NextProducerID},
			Field{"clientTransactionVersion", v.ClientTransactionVersion})
	}
	d.Value = o
	return d, nil
}
