package configs

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil"
)

// Timeout bounds one command, connecting included.
var Timeout = 60 * time.Second

// Main runs kafka-configs.sh and returns the exit status: 0 on success; 1
// for a bad argument (one line on stderr) or a failed command (Kafka's
// "Error while executing config command with args '…'" line, then the
// error). With --zookeeper the command reads and writes ZooKeeper
// directly (RunZooKeeper). commandConfig holds --command-config client
// properties (may be nil).
func Main(ctx context.Context, o Options, commandConfig map[string]string, stdout, stderr io.Writer) int {
	if err := o.resolve(); err != nil {
		return clientutil.Report(stderr, "", err)
	}
	if o.ZooKeeper != "" {
		store, err := openZooKeeper(o.ZooKeeper)
		if err != nil {
			return clientutil.Report(stderr, "", err)
		}
		defer store.Close()
		if err := RunZooKeeper(o, store, stdout); err != nil {
			fmt.Fprintf(stderr, "Error while executing config command with args '%s'\n", strings.Join(o.Args, " "))
			return clientutil.Report(stderr, "", err)
		}
		return 0
	}
	cl, err := clientutil.AdminKgoClient(o.BootstrapServer, commandConfig)
	if err != nil {
		return clientutil.Report(stderr, "", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if o.EntityType == BrokerLoggers {
		err = RunBrokerLoggers(ctx, o, cl, stdout) // loggers.go
	} else {
		err = Run(ctx, o, kadm.NewClient(cl), stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error while executing config command with args '%s'\n", strings.Join(o.Args, " "))
		return clientutil.Report(stderr, "", err)
	}
	return 0
}

// Run executes a resolved command against adm, printing to stdout.
func Run(ctx context.Context, o Options, adm *kadm.Client, stdout io.Writer) error {
	if o.quota != nil {
		return runQuotas(ctx, o, adm, o.quota, stdout) // quotas.go
	}
	if o.EntityType == Users {
		if !o.Alter {
			// ConfigCommand describes a user's (or every user's) quotas
			// first, then its SCRAM credentials.
			part := quotaPart{typ: Users, name: o.EntityName, named: o.EntityName != ""}
			if err := describeQuotas(ctx, adm, []quotaPart{part}, stdout); err != nil {
				return err
			}
		}
		return runUsers(ctx, o, adm, stdout) // users.go
	}
	if o.Alter {
		return alter(ctx, o, adm, stdout)
	}
	return describe(ctx, o, adm, stdout)
}

// entity is one resource to describe: its name ("" = broker default) and
// the header line ConfigCommand prints before its configs.
type entity struct{ name, header string }

func describe(ctx context.Context, o Options, adm *kadm.Client, stdout io.Writer) error {
	kind := "Dynamic"
	if o.All {
		kind = "All"
	}
	var ents []entity
	switch {
	case o.EntityDefault:
		ents = []entity{{"", "Default configs for brokers in the cluster are:"}}
	case o.EntityName != "":
		ents = []entity{{o.EntityName, fmt.Sprintf("%s configs for %s %s are:", kind, singular(o.EntityType), o.EntityName)}}
	case o.EntityType == Topics:
		names, err := adm.ListTopicsWithInternal(ctx)
		if err != nil {
			return err
		}
		for _, n := range names.Names() {
			ents = append(ents, entity{n, fmt.Sprintf("%s configs for topic %s are:", kind, n)})
		}
	default: // every broker, then the cluster default (ConfigCommand 2.x+)
		meta, err := adm.BrokerMetadata(ctx)
		if err != nil {
			return err
		}
		for _, id := range meta.Brokers.NodeIDs() {
			ents = append(ents, entity{strconv.Itoa(int(id)), fmt.Sprintf("%s configs for broker %d are:", kind, id)})
		}
		ents = append(ents, entity{"", "Default configs for brokers in the cluster are:"})
	}
	for _, e := range ents {
		cfgs, err := resourceConfigs(ctx, adm, o.EntityType, e.name)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, e.header)
		for _, c := range cfgs {
			if !o.All && !dynamic(o.EntityType, e.name, c.Source) {
				continue
			}
			fmt.Fprintf(stdout, "  %s=%s sensitive=%t synonyms={%s}\n", c.Key, valueText(c.Value, c.Sensitive), c.Sensitive, synonymsText(c.Synonyms))
		}
	}
	return nil
}

// dynamic is ConfigCommand's filter without --all: a topic's overrides, a
// broker's per-broker dynamic configs, the cluster-wide dynamic defaults.
func dynamic(entityType, name string, src kmsg.ConfigSource) bool {
	switch {
	case entityType == Topics:
		return src == kmsg.ConfigSourceDynamicTopicConfig
	case name == "":
		return src == kmsg.ConfigSourceDynamicDefaultBrokerConfig
	default:
		return src == kmsg.ConfigSourceDynamicBrokerConfig
	}
}

// resourceConfigs describes one topic or broker ("" = the broker default),
// sorted by config name. Errors carry the broker's ErrorMessage.
func resourceConfigs(ctx context.Context, adm *kadm.Client, entityType, name string) ([]kadm.Config, error) {
	var rcs kadm.ResourceConfigs
	var err error
	if entityType == Topics {
		rcs, err = adm.DescribeTopicConfigs(ctx, name)
	} else if name == "" {
		rcs, err = adm.DescribeBrokerConfigs(ctx)
	} else {
		id, _ := strconv.ParseInt(name, 10, 32)
		rcs, err = adm.DescribeBrokerConfigs(ctx, int32(id))
	}
	if err != nil {
		return nil, err
	}
	rc, err := rcs.On(name, nil)
	if err != nil {
		return nil, err
	}
	if rc.Err != nil {
		if rc.ErrMessage != "" {
			return nil, clientutil.WithMessage(rc.Err, rc.ErrMessage)
		}
		return nil, fmt.Errorf("%s %s: %w", singular(entityType), name, rc.Err)
	}
	out := append([]kadm.Config(nil), rc.Configs...)
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func alter(ctx context.Context, o Options, adm *kadm.Client, stdout io.Writer) error {
	var keys []string
	var vals map[string]string
	if o.AddConfig != "" {
		var err error
		if keys, vals, err = ParseAddConfig(o.AddConfig); err != nil {
			return clientutil.Usage("%v", err)
		}
	}
	deletes := ParseDeleteConfig(o.DeleteConfig)
	if o.EntityType == Topics && len(deletes) > 0 {
		// ConfigCommand refuses deleting a config the topic does not override.
		cur, err := resourceConfigs(ctx, adm, Topics, o.EntityName)
		if err != nil {
			return err
		}
		set := map[string]bool{}
		for _, c := range cur {
			if c.Source == kmsg.ConfigSourceDynamicTopicConfig {
				set[c.Key] = true
			}
		}
		var invalid []string
		for _, k := range deletes {
			if !set[k] {
				invalid = append(invalid, k)
			}
		}
		if len(invalid) > 0 {
			return fmt.Errorf("Invalid config(s): %s", strings.Join(invalid, ","))
		}
	}
	var ops []kadm.AlterConfig
	for _, k := range keys {
		v := vals[k]
		ops = append(ops, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v})
	}
	for _, k := range deletes {
		ops = append(ops, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	var resps kadm.AlterConfigsResponses
	var err error
	switch {
	case o.EntityType == Topics:
		resps, err = adm.AlterTopicConfigs(ctx, ops, o.EntityName)
	case o.EntityDefault:
		resps, err = adm.AlterBrokerConfigs(ctx, ops)
	default:
		id, _ := strconv.ParseInt(o.EntityName, 10, 32)
		resps, err = adm.AlterBrokerConfigs(ctx, ops, int32(id))
	}
	if err != nil {
		return err
	}
	for _, r := range resps {
		if r.Err != nil {
			if r.ErrMessage != "" {
				return clientutil.WithMessage(r.Err, r.ErrMessage)
			}
			return r.Err
		}
	}
	if o.EntityDefault {
		fmt.Fprintln(stdout, "Completed updating default config for brokers in the cluster.")
	} else {
		fmt.Fprintf(stdout, "Completed updating config for %s %s.\n", singular(o.EntityType), o.EntityName)
	}
	return nil
}

func singular(entityType string) string { return strings.TrimSuffix(entityType, "s") }

// valueText prints a value as the Java ConfigEntry does: "null" when
// sensitive or absent.
func valueText(v *string, sensitive bool) string {
	if v == nil || sensitive {
		return "null"
	}
	return *v
}

func synonymsText(syns []kadm.ConfigSynonym) string {
	parts := make([]string, len(syns))
	for i, s := range syns {
		parts[i] = fmt.Sprintf("%s:%s=%s", s.Source, s.Key, valueText(s.Value, false))
	}
	return strings.Join(parts, ", ")
}
