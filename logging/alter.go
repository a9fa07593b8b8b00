package logging

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Op is one IncrementalAlterConfigs config entry of a BROKER_LOGGER
// resource: Name a logger, Op the protocol's config operation (0 SET,
// 1 DELETE, 2 APPEND, 3 SUBTRACT), Value the level for SET.
type Op struct {
	Name  string
	Op    int8
	Value *string
}

// Protocol config operations (IncrementalAlterConfigs' ConfigOperation).
const (
	OpSet      int8 = 0
	OpDelete   int8 = 1
	OpAppend   int8 = 2
	OpSubtract int8 = 3
)

// AlterError is a refused BROKER_LOGGER alteration: Code is Kafka's
// (INVALID_CONFIG or INVALID_REQUEST), Message its text.
type AlterError struct {
	Code    *kerr.Error
	Message string
}

func (e *AlterError) Error() string { return e.Message }

// Validate checks ops as Kafka's RuntimeLoggerManager.validateLogLevelConfigs
// does, changing nothing. Errors (*AlterError), for the first bad op:
//   - SET or DELETE of an unknown logger: INVALID_CONFIG "Logger <n> does not exist!";
//   - SET to a level that is not one of Kafka's (exact upper case; OFF is
//     not one): INVALID_CONFIG "Cannot set the log level of <n> to <l> as
//     it is not a supported log level. Valid log levels are DEBUG, ERROR,
//     FATAL, INFO, TRACE, WARN";
//   - DELETE of root: INVALID_REQUEST "Removing the log level of the root
//     logger is not allowed";
//   - APPEND / SUBTRACT / another op: INVALID_REQUEST "<OP> operation is not
//     allowed for the BROKER_LOGGER resource".
func (l *Levels) Validate(ops []Op) error {
	for _, op := range ops {
		switch op.Op {
		case OpSet:
			if !l.Exists(op.Name) {
				return &AlterError{kerr.InvalidConfig, "Logger " + op.Name + " does not exist!"}
			}
			level := ""
			if op.Value != nil {
				level = *op.Value
			}
			if !ValidLevel(level) {
				return &AlterError{kerr.InvalidConfig, fmt.Sprintf("Cannot set the log level of %s to %s as it is not a supported log level. Valid log levels are %s", op.Name, level, ValidLevelsString)}
			}
		case OpDelete:
			if !l.Exists(op.Name) {
				return &AlterError{kerr.InvalidConfig, "Logger " + op.Name + " does not exist!"}
			}
			if op.Name == Root {
				return &AlterError{kerr.InvalidRequest, "Removing the log level of the " + Root + " logger is not allowed"}
			}
		case OpAppend:
			return &AlterError{kerr.InvalidRequest, "APPEND operation is not allowed for the BROKER_LOGGER resource"}
		case OpSubtract:
			return &AlterError{kerr.InvalidRequest, "SUBTRACT operation is not allowed for the BROKER_LOGGER resource"}
		default:
			return &AlterError{kerr.InvalidRequest, fmt.Sprintf("Unknown operation type %d is not allowed for the BROKER_LOGGER resource", op.Op)}
		}
	}
	return nil
}

// Alter validates ops (Validate) and, unless validateOnly, applies all of
// them in order: SET gives the logger its own level (root: the inherited
// level), DELETE makes it inherit again. Nothing is applied when one op
// is refused. Returns a line per applied op for the broker's log
// ("Updated the log level of <n> to <l>", "Unset the log level of <n>").
func (l *Levels) Alter(ops []Op, validateOnly bool) ([]string, error) {
	if err := l.Validate(ops); err != nil {
		return nil, err
	}
	if validateOnly {
		return nil, nil
	}
	var lines []string
	for _, op := range ops {
		if op.Op == OpSet {
			l.Set(op.Name, *op.Value)
			lines = append(lines, "Updated the log level of "+op.Name+" to "+*op.Value)
		} else {
			l.Unset(op.Name)
			lines = append(lines, "Unset the log level of "+op.Name)
		}
	}
	return lines, nil
}
