// Package consoleproducer is `gregor console-producer`
// (kafka-console-producer.sh): it reads lines from stdin and produces each
// as one record, with Kafka's ConsoleProducer flags and LineMessageReader
// properties (parse.key, key.separator, parse.headers, ignore.error,
// null.marker…).
package consoleproducer

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// LineReader turns one input line into a record, as Kafka's
// LineMessageReader does. Configure it with NewLineReader.
type LineReader struct {
	ParseKey            bool   // parse.key, default false
	KeySeparator        string // key.separator, default "\t"
	ParseHeaders        bool   // parse.headers, default false
	HeadersDelimiter    string // headers.delimiter, default "\t": ends the headers part
	HeadersSeparator    string // headers.separator, default ","
	HeadersKeySeparator string // headers.key.separator, default ":"
	IgnoreError         bool   // ignore.error, default false: a line without separator is a whole value
	NullMarker          string // null.marker, default unset: a key/value/header value equal to it is null
	lineNo              int
}

// NewLineReader configures a LineReader from --property values. Unknown
// properties are returned (the tool warns about them).
func NewLineReader(props map[string]string) (*LineReader, []string, error) {
	r := &LineReader{KeySeparator: "\t", HeadersDelimiter: "\t", HeadersSeparator: ",", HeadersKeySeparator: ":"}
	var unknown []string
	for k, v := range props {
		switch k {
		case "parse.key":
			r.ParseKey = strings.EqualFold(strings.TrimSpace(v), "true")
		case "key.separator":
			r.KeySeparator = v
		case "parse.headers":
			r.ParseHeaders = strings.EqualFold(strings.TrimSpace(v), "true")
		case "headers.delimiter":
			r.HeadersDelimiter = v
		case "headers.separator":
			r.HeadersSeparator = v
		case "headers.key.separator":
			r.HeadersKeySeparator = v
		case "ignore.error":
			r.IgnoreError = strings.EqualFold(strings.TrimSpace(v), "true")
		case "null.marker":
			r.NullMarker = v
		default:
			unknown = append(unknown, k)
		}
	}
	for name, sep := range map[string]string{"key.separator": r.KeySeparator, "headers.delimiter": r.HeadersDelimiter,
		"headers.separator": r.HeadersSeparator, "headers.key.separator": r.HeadersKeySeparator} {
		if sep == "" {
			return nil, nil, fmt.Errorf("property %s must not be empty", name)
		}
		if r.NullMarker != "" && r.NullMarker == sep {
			return nil, nil, fmt.Errorf("null.marker %q must differ from %s", r.NullMarker, name)
		}
	}
	return r, unknown, nil
}

// Parse turns one line (without its line terminator) into a record for
// topic. Errors name the line number, as Kafka's messages do.
func (r *LineReader) Parse(topic, line string) (*kgo.Record, error) {
	r.lineNo++
	rec := &kgo.Record{Topic: topic}
	rest := line
	if r.ParseHeaders {
		hs, after, ok := strings.Cut(rest, r.HeadersDelimiter)
		switch {
		case ok:
			hdrs, err := r.headers(hs)
			if err != nil {
				return nil, err
			}
			rec.Headers, rest = hdrs, after
		case !r.IgnoreError:
			return nil, fmt.Errorf("No headers delimiter found on line number %d: '%s'", r.lineNo, line)
		}
	}
	if r.ParseKey {
		k, v, ok := strings.Cut(rest, r.KeySeparator)
		switch {
		case ok:
			rec.Key, rest = r.bytes(k), v
		case !r.IgnoreError:
			return nil, fmt.Errorf("No key separator found on line number %d: '%s'", r.lineNo, line)
		}
	}
	rec.Value = r.bytes(rest) // nil (a tombstone) when the value is the null marker
	return rec, nil
}

func (r *LineReader) headers(s string) ([]kgo.RecordHeader, error) {
	var out []kgo.RecordHeader
	for _, h := range strings.Split(s, r.HeadersSeparator) {
		k, v, ok := strings.Cut(h, r.HeadersKeySeparator)
		if r.NullMarker != "" && k == r.NullMarker {
			return nil, fmt.Errorf("Header keys should not be equal to the null marker '%s' as they can't be null (line number %d)", r.NullMarker, r.lineNo)
		}
		hdr := kgo.RecordHeader{Key: k}
		if ok {
			hdr.Value = r.bytes(v)
		}
		out = append(out, hdr)
	}
	return out, nil
}

// bytes returns s as bytes, or nil when s is the null marker.
func (r *LineReader) bytes(s string) []byte {
	if r.NullMarker != "" && s == r.NullMarker {
		return nil
	}
	return []byte(s)
}
