package configs

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil"
)

// RunBrokerLoggers is --entity-type broker-loggers (ConfigCommand's
// BrokerLoggerConfigType), --bootstrap-server only:
//
//   - --describe --entity-name N prints "Dynamic configs for broker-logger
//     N are:" (--all: "All configs…"), then every logger of broker N as
//     "  <logger>=<LEVEL> sensitive=false synonyms={}" (DescribeConfigs of
//     the BROKER_LOGGER resource, sorted by name; no source filter).
//   - --alter --entity-name N --add-config logger=LEVEL,… --delete-config
//     logger,… first describes the broker's loggers and refuses names it
//     does not have ("Invalid broker logger(s): a,b"), then sends one
//     IncrementalAlterConfigs of BROKER_LOGGER N (SET for each added,
//     DELETE for each removed) and prints "Completed updating config for
//     broker-logger N.". The broker validates the levels (INVALID_CONFIG
//     with Kafka's message).
//
// Errors: a request that fails, or the broker's error code with its
// message.
func RunBrokerLoggers(ctx context.Context, o Options, cl *kgo.Client, stdout io.Writer) error {
	loggers, err := describeLoggers(ctx, cl, o.EntityName)
	if err != nil {
		return err
	}
	if !o.Alter {
		kind := "Dynamic"
		if o.All {
			kind = "All"
		}
		fmt.Fprintf(stdout, "%s configs for broker-logger %s are:\n", kind, o.EntityName)
		for _, c := range loggers {
			fmt.Fprintf(stdout, "  %s=%s sensitive=%t synonyms={}\n", c.Name, valueText(c.Value, c.IsSensitive), c.IsSensitive)
		}
		return nil
	}
	var keys []string
	var vals map[string]string
	if o.AddConfig != "" {
		if keys, vals, err = ParseAddConfig(o.AddConfig); err != nil {
			return clientutil.Usage("%v", err)
		}
	}
	deletes := ParseDeleteConfig(o.DeleteConfig)
	have := map[string]bool{}
	for _, c := range loggers {
		have[c.Name] = true
	}
	var invalid []string
	for _, k := range slices.Concat(deletes, keys) {
		if !have[k] {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return clientutil.WithMessage(kerr.InvalidConfig, "Invalid broker logger(s): "+strings.Join(invalid, ","))
	}
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, o.EntityName
	for _, k := range keys {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		v := vals[k]
		c.Name, c.Op, c.Value = k, kmsg.IncrementalAlterConfigOpSet, &v
		res.Configs = append(res.Configs, c)
	}
	for _, k := range deletes {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		empty := ""
		c.Name, c.Op, c.Value = k, kmsg.IncrementalAlterConfigOpDelete, &empty
		res.Configs = append(res.Configs, c)
	}
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, r := range resp.Resources {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			if r.ErrorMessage != nil && *r.ErrorMessage != "" {
				return clientutil.WithMessage(err, *r.ErrorMessage)
			}
			return err
		}
	}
	fmt.Fprintf(stdout, "Completed updating config for broker-logger %s.\n", o.EntityName)
	return nil
}

// describeLoggers is DescribeConfigs of BROKER_LOGGER id (kgo sends it to
// that broker), sorted by logger name.
func describeLoggers(ctx context.Context, cl *kgo.Client, id string) ([]kmsg.DescribeConfigsResponseResourceConfig, error) {
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, id
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if len(resp.Resources) != 1 {
		return nil, fmt.Errorf("DescribeConfigs of broker-logger %s: %d resources in the answer", id, len(resp.Resources))
	}
	r := resp.Resources[0]
	if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
		if r.ErrorMessage != nil && *r.ErrorMessage != "" {
			return nil, clientutil.WithMessage(err, *r.ErrorMessage)
		}
		return nil, err
	}
	out := r.Configs
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
