package clientutil

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// JavaException renders err as Kafka's Java tools print a failed
// future's cause (ExecutionException.getMessage): "<exception class>:
// <message>", e.g. "org.apache.kafka.common.errors.OffsetOutOfRangeException:
// The requested offset is not within the range of offsets maintained by
// the server." A *kerr.Error gets its Java class and Kafka's default
// message, or the broker's ErrorMessage when err is a *BrokerError
// carrying one; any other error (a connection failure, a timeout) is
// err.Error() unchanged. nil gives "".
func JavaException(err error) string {
	if err == nil {
		return ""
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return err.Error()
	}
	je, ok := javaErrors[ke.Code]
	if !ok {
		return err.Error()
	}
	msg := je.message
	var be *BrokerError
	if errors.As(err, &be) {
		msg = be.Message
	}
	return je.class + ": " + msg
}

// JavaExceptionClass is the Java exception class Kafka's clients raise
// for err's error code ("org.apache.kafka.common.errors.TimeoutException"),
// or "" when err carries no Kafka error code.
func JavaExceptionClass(err error) string {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return ""
	}
	return javaErrors[ke.Code].class
}
