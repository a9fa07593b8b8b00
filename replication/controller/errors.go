package controller

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Error is a Kafka error code with the message sent back to the client
// (the error_message fields of CreateTopics v1+, CreatePartitions, …).
// errors.Is(err, kerr.X) matches its code.
type Error struct {
	Code    *kerr.Error
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code.Message
	}
	return e.Code.Message + ": " + e.Message
}

// Unwrap returns the kerr code.
func (e *Error) Unwrap() error { return e.Code }

func errf(code *kerr.Error, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrNotController: this broker does not hold /controller (NOT_CONTROLLER).
var ErrNotController = &Error{Code: kerr.NotController, Message: "This is not the correct controller for this cluster."}

// Code splits an error returned by the controller into a Kafka error code
// and message for a response: nil → (0, nil); *Error → its code and
// message; *kerr.Error → its code; anything else → UNKNOWN_SERVER_ERROR
// with the error text.
func Code(err error) (int16, *string) {
	if err == nil {
		return 0, nil
	}
	var ce *Error
	if errors.As(err, &ce) {
		m := ce.Message
		if m == "" {
			return ce.Code.Code, nil
		}
		return ce.Code.Code, &m
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code, nil
	}
	m := err.Error()
	return kerr.UnknownServerError.Code, &m
}
