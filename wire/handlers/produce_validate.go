package handlers

// Produce-time validation and transformation of one partition's records,
// after Kafka's LogValidator (validateMessagesAndAssignOffsets) for batches
// from clients:
//
//   - message format v0/v1 (produce v0-v2): converted to a record batch
//     first (produce_legacy.go), then checked as one;
//   - integrity: CRC-32C, magic 2, header sanity → CORRUPT_MESSAGE;
//     exactly one batch per partition (v3+) → INVALID_RECORD;
//   - control batches from clients → INVALID_RECORD; a producer id
//     without a base sequence → INVALID_RECORD (record.Validate: only a
//     coordinator writes such transactional batches); transactional
//     batches pass on to the partition's producer state;
//   - zstd below produce v7 → UNSUPPORTED_COMPRESSION_TYPE (KIP-110);
//   - every record: count against the header, offset deltas 0..n-1, keys
//     on compacted topics → INVALID_RECORD; decompression bounded by
//     maxUncompressed → CORRUPT_MESSAGE;
//   - timestamps: a batch claiming LogAppendTime → INVALID_TIMESTAMP; with
//     CreateTime, records further than message.timestamp.difference.max.ms
//     from the broker clock → INVALID_TIMESTAMP (even if other records
//     also lack keys, as in Kafka); the header's maxTimestamp is
//     recomputed from the records (Kafka does not trust it);
//   - KIP-467: keys and timestamps are checked on every record, and every
//     record at fault is answered (index and message; Kafka's summary as
//     the partition's message), not just the first;
//   - message.timestamp.type=LogAppendTime: the batch is stamped by the
//     partition actor at append time (Produce.LogAppendTime) and the time
//     is answered in the produce response;
//   - compression.type other than "producer": a batch written with another
//     codec is recompressed (a new buffer; offsets and timestamps kept),
//     and the result must still fit max.message.bytes → MESSAGE_TOO_LARGE.
//
// The common case (codec kept, CreateTime, uncompressed or compressed)
// touches the request buffer only to read it: no copy, no allocation per
// record.

import (
	"encoding/binary"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage"
	"gregor/storage/record"
)

// produceRejection is why a partition's records were refused: the Kafka
// error, its message (ProduceResponse ErrorMessage, v8+) and the records at
// fault, each with its own message (ErrorRecords, v8+; KIP-467), none when
// the batch as a whole is at fault.
type produceRejection struct {
	err     *kerr.Error
	detail  string
	records []record.RecordError
}

// validatedBatch is a batch ready for the partition actor.
type validatedBatch struct {
	batch []byte        // the batch to append: the request's bytes, or a recompressed copy
	hdr   record.Header // batch's header
	// logAppendTime: the topic uses message.timestamp.type=LogAppendTime,
	// so the actor stamps the batch with its clock when appending.
	logAppendTime bool
}

// validateProduceBatch checks one partition's records for a produce request
// of the given version against the topic's cfg, with now the broker clock
// in ms. On success the batch may alias records (its maxTimestamp possibly
// corrected in place) or be a recompressed copy.
func validateProduceBatch(cfg storage.LogConfig, version int16, records []byte, now int64) (validatedBatch, *produceRejection) {
	if len(records) == 0 {
		return validatedBatch{}, &produceRejection{kerr.InvalidRecord, "produce requests v3+ must carry exactly one record batch", nil}
	}
	if record.IsLegacyMagic(records) {
		// Message formats v0/v1: converted to one record batch, then
		// validated as one (produce_legacy.go).
		conv, rej := convertLegacyProduce(cfg, version, records)
		if rej != nil {
			return validatedBatch{}, rej
		}
		records = conv
	}
	hdr, batch, err := record.Validate(records)
	if err != nil {
		return validatedBatch{}, rejection(err)
	}
	if len(batch) != len(records) {
		return validatedBatch{}, &produceRejection{kerr.InvalidRecord, "produce requests v3+ must carry exactly one record batch", nil}
	}
	if hdr.IsControl() {
		return validatedBatch{}, &produceRejection{kerr.InvalidRecord, "control batches are not accepted from clients", nil}
	}
	if hdr.Codec() == record.CodecZstd && version < 7 {
		return validatedBatch{}, &produceRejection{kerr.UnsupportedCompressionType, "zstd compression requires produce request version 7 or later", nil}
	}
	if hdr.IsLogAppendTime() {
		return validatedBatch{}, &produceRejection{kerr.InvalidTimestamp, "invalid timestamp type LogAppendTime in a batch from a producer: producers must set CreateTime", nil}
	}
	limit := maxUncompressed(cfg.MaxMessageBytes)
	rules := record.Rules{MaxUncompressed: limit, KeyRequired: cfg.Compact}
	if !cfg.LogAppendTime {
		rules.Now, rules.MaxTimestampDiff = now, cfg.MessageTimestampDifferenceMaxMs
		rules.MaxTimestampBefore, rules.MaxTimestampAfter = cfg.MessageTimestampBeforeMaxMs, cfg.MessageTimestampAfterMaxMs
	}
	maxTs, err := record.CheckRecords(hdr, batch, rules)
	if err != nil {
		return validatedBatch{}, rejection(err)
	}
	if !cfg.LogAppendTime && maxTs != hdr.MaxTimestamp {
		// Kafka rewrites maxTimestamp from the records (setMaxTimestamp);
		// the time index and ListOffsets rely on it.
		binary.BigEndian.PutUint64(batch[record.OffMaxTimestamp:], uint64(maxTs))
		binary.BigEndian.PutUint32(batch[record.OffCRC:], record.ComputeCRC(batch))
		hdr.MaxTimestamp = maxTs
	}
	if target, ok := targetCodec(cfg.CompressionType, hdr.Codec()); ok && target != hdr.Codec() {
		out, err := record.Recompress(batch, target, limit)
		if err != nil {
			return validatedBatch{}, rejection(err)
		}
		if len(out) > int(cfg.MaxMessageBytes) {
			return validatedBatch{}, &produceRejection{kerr.MessageTooLarge, "the batch recompressed with the topic's compression.type exceeds max.message.bytes", nil}
		}
		h, err := record.ParseHeader(out)
		if err != nil {
			return validatedBatch{}, rejection(err)
		}
		batch, hdr = out, h
	}
	return validatedBatch{batch: batch, hdr: hdr, logAppendTime: cfg.LogAppendTime}, nil
}

// targetCodec maps a compression.type value to the codec batches are stored
// with (Kafka's BrokerCompressionType.targetCompressionType): "producer" or
// "" keep the producer's codec (ok false).
func targetCodec(compressionType string, source record.Codec) (record.Codec, bool) {
	switch compressionType {
	case "uncompressed":
		return record.CodecNone, true
	case "gzip":
		return record.CodecGzip, true
	case "snappy":
		return record.CodecSnappy, true
	case "lz4":
		return record.CodecLZ4, true
	case "zstd":
		return record.CodecZstd, true
	}
	return source, false
}

// rejection maps a storage/record error to the produce error Kafka answers.
// Per-record rule violations come with every record at fault and Kafka's
// summary as the message.
func rejection(err error) *produceRejection {
	var ie *record.InvalidError
	if errors.As(err, &ie) {
		return &produceRejection{kerr.InvalidRecord, rejectionDetail(ie, ie.Reason, ie.Records), ie.RecordErrors()}
	}
	var te *record.TimestampError
	if errors.As(err, &te) {
		return &produceRejection{kerr.InvalidTimestamp, rejectionDetail(te, te.Reason, te.Records), te.RecordErrors()}
	}
	return &produceRejection{kerr.CorruptMessage, err.Error(), nil}
}

// rejectionDetail is the ErrorMessage for a record error: Kafka's summary
// (reason) when it lists records at fault, else the error's text.
func rejectionDetail(err error, reason string, records []record.RecordError) string {
	if len(records) > 0 {
		return reason
	}
	return err.Error()
}
