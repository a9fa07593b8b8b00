package handlers

// Produce of message formats v0/v1 (produce v0-v2 from clients of Kafka
// 0.8-0.10): the message set is validated and converted to one record
// batch (magic 2), which then takes the normal produce path
// (validateProduceBatch's checks, the partition actor's append,
// replication), as Kafka 3.x's LogValidator converts old formats to the
// log's magic 2 on append:
//
//   - produce v3+ with magic 0/1 → INVALID_RECORD (Kafka's
//     ProduceRequest.validateRecords);
//   - bad CRC, short message, lengths → CORRUPT_MESSAGE; bad wrapper,
//     mixed magic, a compressed message not alone, inner messages
//     compressed or of another magic, a magic-1 wrapper offset below its
//     last inner offset → INVALID_RECORD (record.ParseLegacySet); a
//     wrapper expanding past maxUncompressed(max.message.bytes) →
//     CORRUPT_MESSAGE;
//   - a message claiming LogAppendTime → INVALID_TIMESTAMP when the topic
//     uses LogAppendTime or the message has no timestamp (Kafka's
//     validateTimestamp; otherwise its CreateTime timestamp is checked);
//   - the batch is written with the topic's compression.type, or with the
//     wrapper's codec for "producer"; offsets are assigned by the
//     partition (the old inner offsets are not kept, as in Kafka);
//     magic 0 messages get NO_TIMESTAMP (-1), which the timestamp range
//     check skips; the converted batch must fit max.message.bytes →
//     MESSAGE_TOO_LARGE.
//
// On any error nothing is appended for the partition.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage"
	"gregor/storage/record"
)

// convertLegacyProduce turns a producer's v0/v1 message set into the
// record batch to validate and append, or the partition's rejection.
func convertLegacyProduce(cfg storage.LogConfig, version int16, records []byte) ([]byte, *produceRejection) {
	if version >= 3 {
		return nil, &produceRejection{kerr.InvalidRecord, fmt.Sprintf("Produce requests with version %d are only allowed to contain record batches with magic version 2", version), nil}
	}
	set, err := record.ParseLegacySet(records, maxUncompressed(cfg.MaxMessageBytes))
	if err != nil {
		return nil, rejection(err)
	}
	for i := range set.Messages {
		m := &set.Messages[i]
		if m.IsLogAppendTime() && (cfg.LogAppendTime || m.Timestamp == record.NoTimestamp) {
			msg := "Invalid timestamp type in message: producer should not set timestamp type to LogAppendTime."
			return nil, &produceRejection{kerr.InvalidTimestamp, "One or more records have been rejected due to invalid timestamp", []record.RecordError{{Index: i, Message: msg}}}
		}
	}
	codec := set.Codec
	if target, ok := targetCodec(cfg.CompressionType, set.Codec); ok {
		codec = target
	}
	batch, err := record.LegacyToBatch(set, codec)
	if err != nil {
		return nil, &produceRejection{kerr.CorruptMessage, err.Error(), nil}
	}
	if len(batch) > int(cfg.MaxMessageBytes) {
		return nil, &produceRejection{kerr.MessageTooLarge, fmt.Sprintf("Message batch size is %d bytes after conversion to magic 2, which exceeds the maximum configured size of %d.", len(batch), cfg.MaxMessageBytes), nil}
	}
	return batch, nil
}
