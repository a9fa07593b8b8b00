// Package consoleconsumer is `gregor console-consumer`
// (kafka-console-consumer.sh): it consumes a topic and prints each record
// with Kafka's DefaultMessageFormatter layout, then "Processed a total of N
// messages" on stderr.
package consoleconsumer

import (
	"bufio"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Formatter prints records as Kafka's DefaultMessageFormatter does: the
// enabled fields in the order timestamp, partition, offset, headers, key,
// value, separated by key.separator, then line.separator; a null key, value
// or header value prints null.literal.
type Formatter struct {
	PrintTimestamp   bool   // print.timestamp: "CreateTime:<ms>", "LogAppendTime:<ms>" or "NO_TIMESTAMP"
	PrintPartition   bool   // print.partition: "Partition:<n>"
	PrintOffset      bool   // print.offset: "Offset:<n>"
	PrintHeaders     bool   // print.headers: "k:v" joined by HeadersSeparator, or "NO_HEADERS"
	PrintKey         bool   // print.key
	PrintValue       bool   // print.value, default true
	KeySeparator     string // key.separator, default "\t" (between every printed field)
	LineSeparator    string // line.separator, default "\n"
	HeadersSeparator string // headers.separator, default ","
	NullLiteral      string // null.literal, default "null"
}

// NewFormatter configures a Formatter from --property values; properties
// it does not know are returned (deserializer class names among them:
// records print as raw bytes).
func NewFormatter(props map[string]string) (*Formatter, []string) {
	f := &Formatter{PrintValue: true, KeySeparator: "\t", LineSeparator: "\n", HeadersSeparator: ",", NullLiteral: "null"}
	var unknown []string
	isTrue := func(v string) bool { return strings.EqualFold(strings.TrimSpace(v), "true") }
	for k, v := range props {
		switch k {
		case "print.timestamp":
			f.PrintTimestamp = isTrue(v)
		case "print.partition":
			f.PrintPartition = isTrue(v)
		case "print.offset":
			f.PrintOffset = isTrue(v)
		case "print.headers":
			f.PrintHeaders = isTrue(v)
		case "print.key":
			f.PrintKey = isTrue(v)
		case "print.value":
			f.PrintValue = isTrue(v)
		case "key.separator":
			f.KeySeparator = v
		case "line.separator":
			f.LineSeparator = v
		case "headers.separator":
			f.HeadersSeparator = v
		case "null.literal":
			f.NullLiteral = v
		default:
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	return f, unknown
}

// Write appends one formatted record to w.
func (f *Formatter) Write(w *bufio.Writer, r *kgo.Record) {
	// sep ends a field: key.separator when another field follows, else
	// line.separator (Kafka's writeSeparator(columnSeparator)).
	sep := func(more bool) {
		if more {
			w.WriteString(f.KeySeparator)
		} else {
			w.WriteString(f.LineSeparator)
		}
	}
	if f.PrintTimestamp {
		switch r.Attrs.TimestampType() {
		case 0:
			w.WriteString("CreateTime:" + strconv.FormatInt(r.Timestamp.UnixMilli(), 10))
		case 1:
			w.WriteString("LogAppendTime:" + strconv.FormatInt(r.Timestamp.UnixMilli(), 10))
		default:
			w.WriteString("NO_TIMESTAMP")
		}
		sep(f.PrintPartition || f.PrintOffset || f.PrintHeaders || f.PrintKey || f.PrintValue)
	}
	if f.PrintPartition {
		w.WriteString("Partition:" + strconv.Itoa(int(r.Partition)))
		sep(f.PrintOffset || f.PrintHeaders || f.PrintKey || f.PrintValue)
	}
	if f.PrintOffset {
		w.WriteString("Offset:" + strconv.FormatInt(r.Offset, 10))
		sep(f.PrintHeaders || f.PrintKey || f.PrintValue)
	}
	if f.PrintHeaders {
		if len(r.Headers) == 0 {
			w.WriteString("NO_HEADERS")
		}
		for i, h := range r.Headers {
			if i > 0 {
				w.WriteString(f.HeadersSeparator)
			}
			w.WriteString(h.Key + ":")
			f.bytes(w, h.Value)
		}
		sep(f.PrintKey || f.PrintValue)
	}
	if f.PrintKey {
		f.bytes(w, r.Key)
		sep(f.PrintValue)
	}
	if f.PrintValue {
		f.bytes(w, r.Value)
		w.WriteString(f.LineSeparator)
	}
}

func (f *Formatter) bytes(w *bufio.Writer, b []byte) {
	if b == nil {
		w.WriteString(f.NullLiteral)
		return
	}
	w.Write(b)
}
