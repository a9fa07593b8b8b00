package dumplog

import (
	"strings"

	"gregor/storage/record"
)

// messageParser decodes one record of an internal topic into the key and
// payload texts kafka-dump-log.sh prints for it (DumpLogSegments'
// MessageParser.parse); payload "" means Kafka prints none. The key text
// is never empty: a record a parser cannot decode gets an error text there.
type messageParser func(key, value []byte, offset int64) (keyText, payloadText string)

// parser is the decoder the options select, nil for none. Kafka checks
// --offsets-decoder before --transaction-log-decoder, so with both the
// offsets decoder wins, as there.
func (o Options) parser() messageParser {
	switch {
	case o.OffsetsDecoder:
		return formatOffsetsRecord
	case o.TransactionLogDecoder:
		return formatTransactionLogRecord
	}
	return nil
}

// writeParsed appends the parser's texts for r as Kafka prints a
// MessageParser's result after the record's metadata:
// " key: K payload: P".
func writeParsed(w *strings.Builder, parse messageParser, r *record.Record, offset int64) {
	key, payload := parse(r.Key, r.Value, offset)
	w.WriteString(" key: ")
	w.WriteString(key)
	if payload != "" {
		w.WriteString(" payload: ")
		w.WriteString(payload)
	}
}
