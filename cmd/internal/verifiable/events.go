// Package verifiable is `gregor verifiable-producer` and `gregor
// verifiable-consumer` (kafka-verifiable-producer.sh and
// kafka-verifiable-consumer.sh, Kafka's VerifiableProducer and
// VerifiableConsumer, the clients of Kafka's system tests): they produce
// increasing integers or consume them in a group, and print one JSON
// event per line on stdout so a test harness can see what was acked,
// consumed and committed. Field names and order are Kafka 3.9's (its
// Jackson serialization: timestamp and name first).
package verifiable

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil"
)

// printer writes events as JSON lines, one at a time (kgo's callbacks run
// on its goroutines).
type printer struct {
	mu sync.Mutex
	w  io.Writer
}

// print writes v as one JSON line, without HTML escaping (Jackson writes
// <, > and & as they are).
func (p *printer) print(v any) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		b.Reset()
		b.WriteString("Bad data can't be written as json: " + err.Error() + "\n")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = p.w.Write(b.Bytes())
}

func nowMs() int64 { return time.Now().UnixMilli() }

// event is the head every event starts with.
type event struct {
	Timestamp int64  `json:"timestamp"`
	Name      string `json:"name"`
}

func head(name string) event { return event{Timestamp: nowMs(), Name: name} }

// javaDouble is a float64 written as Java's Double.toString (what Jackson
// writes): plain decimal with at least one fraction digit for magnitudes
// in [1e-3, 1e7), else "1.5E7" style; NaN and infinities as strings.
type javaDouble float64

// MarshalJSON implements json.Marshaler.
func (d javaDouble) MarshalJSON() ([]byte, error) {
	f := float64(d)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Infinity"`), nil
	}
	return []byte(JavaDouble(f)), nil
}

// JavaDouble formats a finite f as Java's Double.toString.
func JavaDouble(f float64) string {
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // 1.2345e+07
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}

// exceptionClass is Java's exception.getClass().toString() for a send
// error: the Kafka exception of its error code, TimeoutException for a
// record that timed out, else KafkaException.
func exceptionClass(err error) string {
	if c := clientutil.JavaExceptionClass(err); c != "" {
		return "class " + c
	}
	if errors.Is(err, kgo.ErrRecordTimeout) || errors.Is(err, kgo.ErrRecordRetries) {
		return "class org.apache.kafka.common.errors.TimeoutException"
	}
	return "class org.apache.kafka.common.KafkaException"
}

// exceptionMessage is the exception's getMessage(): Kafka's default text
// for an error code, else err's own text.
func exceptionMessage(err error) string {
	s := clientutil.JavaException(err)
	if c := clientutil.JavaExceptionClass(err); c != "" {
		return strings.TrimPrefix(s, c+": ")
	}
	return s
}
