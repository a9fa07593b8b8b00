package transactions

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// failure is Kafka's printErrorAndExit: the tool prints Msg on stderr and
// exits 1. With a cause the line reads "Msg: <cause>. Enable debug logging
// for additional detail.", as Kafka prints the Java exception's message.
type failure struct {
	msg   string
	cause error
}

func (f *failure) Error() string {
	if f.cause == nil {
		return f.msg
	}
	return f.msg + ": " + causeText(f.cause) + ". Enable debug logging for additional detail."
}

func (f *failure) Unwrap() error { return f.cause }

func fail(format string, args ...any) error { return &failure{msg: fmt.Sprintf(format, args...)} }

func failWith(cause error, format string, args ...any) error {
	return &failure{msg: fmt.Sprintf(format, args...), cause: cause}
}

// apiError is a Kafka error code with the message the Java admin client's
// exception carries for it (its handlers' texts, else the broker's
// ErrorMessage, else the error code's description).
type apiError struct {
	err *kerr.Error
	msg string
}

func (e *apiError) Error() string { return e.msg }
func (e *apiError) Unwrap() error { return e.err }

// codeError wraps err (a *kerr.Error or nil) with msg when it is a Kafka
// error code; "" msg falls back to the broker's message and then to the
// code's description. A nil err stays nil.
func codeError(err error, msg, brokerMsg string) error {
	if err == nil {
		return nil
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return err
	}
	if msg == "" {
		msg = brokerMsg
	}
	if msg == "" {
		msg = ke.Description
	}
	return &apiError{err: ke, msg: msg}
}

// causeText is the message Kafka's exception would carry for err: an
// apiError's own, a bare Kafka error code's description, else err's text.
func causeText(err error) string {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.msg
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Description
	}
	return err.Error()
}
