package handlers

// BROKER_LOGGER resources (type 8, KIP-412) of DescribeConfigs (32) and
// IncrementalAlterConfigs (44): the broker's run-time log levels
// (gregor/logging), as Kafka's ConfigHelper and RuntimeLoggerManager
// serve them. The resource name must be this broker's id. Levels are not
// stored: they last until the broker stops, as in Kafka. AlterConfigs
// (33) does not take them (INVALID_REQUEST "Unknown resource type 8").

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/logging"
	"gregor/replication/controller"
)

// noLoggers stands in when the broker was assembled without a registry.
var noLoggers = logging.New(logging.Info)

func (b *Broker) loggers() *logging.Levels {
	if b.Loggers == nil {
		return noLoggers
	}
	return b.Loggers
}

// describeBrokerLoggers is DescribeConfigs of a BROKER_LOGGER resource:
// every known logger with its effective level, source
// DYNAMIC_BROKER_LOGGER_CONFIG, not read-only nor sensitive, no synonyms
// (ConfigHelper.describeConfigs), sorted by name. Errors: an empty name
// ("Broker id must not be empty"), a non-numeric one, another broker's
// id: INVALID_REQUEST.
func describeBrokerLoggers(b *Broker, r kmsg.DescribeConfigsRequestResource) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	if r.ResourceName == "" {
		return nil, &controller.Error{Code: kerr.InvalidRequest, Message: "Broker id must not be empty"}
	}
	id, err := strconv.ParseInt(r.ResourceName, 10, 32)
	if err != nil {
		return nil, &controller.Error{Code: kerr.InvalidRequest, Message: "Broker id must be an integer, but it is: " + r.ResourceName}
	}
	if int32(id) != b.brokerID() {
		return nil, &controller.Error{Code: kerr.InvalidRequest, Message: fmt.Sprintf("Unexpected broker id, expected %d but received %s", b.brokerID(), r.ResourceName)}
	}
	levels := b.loggers().Loggers()
	names := make([]string, 0, len(levels))
	for n := range levels {
		names = append(names, n)
	}
	sort.Strings(names)
	want := wanted(r.ConfigNames)
	var out []kmsg.DescribeConfigsResponseResourceConfig
	for _, n := range names {
		if !want(n) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		v := levels[n]
		c.Name, c.Value, c.Source = n, &v, kmsg.ConfigSourceDynamicBrokerLoggerConfig
		out = append(out, c)
	}
	return out, nil
}

// alterBrokerLoggers is IncrementalAlterConfigs of a BROKER_LOGGER
// resource (RuntimeLoggerManager.applyChangesForResource after
// ConfigAdminManager.preprocess): a SET without a value is INVALID_REQUEST
// "Null value not supported for : <names>"; the name must be this
// broker's id (INVALID_REQUEST "Node id must be an integer, but it is:
// <n>" / "Unexpected node id. Expected <id>, but received <n>"); then
// every op is validated (logging.Levels.Validate: INVALID_CONFIG for an
// unknown logger or level, INVALID_REQUEST for APPEND/SUBTRACT or
// deleting root) and, unless validateOnly, all are applied. Nothing is
// applied when one is refused.
func alterBrokerLoggers(b *Broker, r kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) error {
	var nulls []string
	ops := make([]logging.Op, 0, len(r.Configs))
	for _, c := range r.Configs {
		if c.Op != kmsg.IncrementalAlterConfigOpDelete && c.Value == nil {
			nulls = append(nulls, c.Name)
		}
		ops = append(ops, logging.Op{Name: c.Name, Op: int8(c.Op), Value: c.Value})
	}
	if len(nulls) > 0 {
		return &controller.Error{Code: kerr.InvalidRequest, Message: "Null value not supported for : " + strings.Join(nulls, ", ")}
	}
	id, err := strconv.ParseInt(r.ResourceName, 10, 32)
	if err != nil {
		return &controller.Error{Code: kerr.InvalidRequest, Message: "Node id must be an integer, but it is: " + r.ResourceName}
	}
	if int32(id) != b.brokerID() {
		return &controller.Error{Code: kerr.InvalidRequest, Message: fmt.Sprintf("Unexpected node id. Expected %d, but received %s", b.brokerID(), r.ResourceName)}
	}
	lines, err := b.loggers().Alter(ops, validateOnly)
	if ae, ok := err.(*logging.AlterError); ok {
		return &controller.Error{Code: ae.Code, Message: ae.Message}
	}
	if err != nil {
		return err
	}
	if b.Log != nil {
		for _, l := range lines {
			b.Log.Warn(l)
		}
	}
	return nil
}
