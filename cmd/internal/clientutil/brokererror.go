package clientutil

import "errors"

// BrokerError is a Kafka error code answered by the broker together with
// the response's ErrorMessage (CreateTopics, CreatePartitions,
// DeleteTopics, AlterConfigs, IncrementalAlterConfigs, DescribeConfigs
// ErrorMessage fields). Error() is the broker's message alone, which is
// what Kafka's tools print (the Java ApiException carries that message);
// errors.Is / errors.As still see the error code (a *kerr.Error).
type BrokerError struct {
	Err     error  // the error code, usually a *kerr.Error
	Message string // the response's ErrorMessage; never empty
}

func (e *BrokerError) Error() string { return e.Message }
func (e *BrokerError) Unwrap() error { return e.Err }

// WithMessage returns err with the broker's ErrorMessage msg attached as a
// *BrokerError; err itself when msg is empty (the code's own description
// is then the best text) or err is nil.
func WithMessage(err error, msg string) error {
	if err == nil || msg == "" {
		return err
	}
	return &BrokerError{Err: err, Message: msg}
}

// HasBrokerMessage reports whether err carries a broker ErrorMessage, which
// already names the resource (callers then add no "topic X:" prefix).
func HasBrokerMessage(err error) bool {
	var be *BrokerError
	return errors.As(err, &be)
}
