// Package clientutil is the client plumbing the Kafka-style tools share:
// bootstrap lists, "k=v" property flags and files, franz-go kgo options from
// Kafka client property names (acks, linger.ms, batch.size,
// compression.type, client.id…), and the tools' error/exit-code convention.
// The console producer/consumer use it now; the perf-test tools can later.
package clientutil

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"

	"github.com/magiconair/properties"
)

// ParseBootstrap splits a --bootstrap-server / --broker-list value
// ("host1:9092,host2:9092") into addresses. Every entry must be host:port
// with a numeric port (Kafka's ClientUtils.parseAndValidateAddresses).
func ParseBootstrap(flag, s string) ([]string, error) {
	var out []string
	for _, a := range strings.Split(s, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		_, port, err := net.SplitHostPort(a)
		if err != nil {
			return nil, fmt.Errorf("invalid url in %s: %s (expected host:port)", flag, a)
		}
		if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
			return nil, fmt.Errorf("invalid port in %s: %s", flag, a)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s is empty; expected host:port[,host:port...]", flag)
	}
	return out, nil
}

// ParseProps turns repeated "key=value" flag values (--property,
// --producer-property, --consumer-property) into a map; later values win.
// As Kafka's CommandLineUtils.parseKeyValueArgs, the value is everything
// after the first '=', kept as typed (key.separator=" :: " keeps its
// spaces); the key is trimmed.
func ParseProps(flag string, list []string) (map[string]string, error) {
	return parseKV(flag, list, false)
}

// ParseConfigs is ParseProps for config overrides (kafka-topics.sh
// --config, kafka-configs.sh --add-config entries): as Kafka splits them
// on \s*=\s*, the whitespace around the '=' goes (and, here, around the
// whole entry too: config values never start or end with spaces).
func ParseConfigs(flag string, list []string) (map[string]string, error) {
	return parseKV(flag, list, true)
}

func parseKV(flag string, list []string, trimValue bool) (map[string]string, error) {
	out := make(map[string]string, len(list))
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("invalid %s %q: expected key=value", flag, kv)
		}
		if trimValue {
			v = strings.TrimSpace(v)
		}
		out[k] = v
	}
	return out, nil
}

// LoadPropsFile reads a Java properties file (--producer.config,
// --consumer.config, --command-config) into a map, without ${} expansion.
func LoadPropsFile(path string) (map[string]string, error) {
	l := properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	p, err := l.LoadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return p.Map(), nil
}

// Merge returns a copy of maps merged left to right (later maps win).
func Merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// ExitError carries a tool's exit status with its message.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Usage marks a command-line mistake (exit status 1, as Kafka's
// CommandLineUtils.printUsageAndExit).
func Usage(format string, args ...any) error {
	return &ExitError{Code: 1, Err: fmt.Errorf(format, args...)}
}

// ZooKeeperUnsupported is the answer to --zookeeper until the tool has a
// ZooKeeper implementation: exit status 2 with a message naming the flag.
func ZooKeeperUnsupported(tool string) error {
	return &ExitError{Code: 2, Err: fmt.Errorf("%s: --zookeeper is not supported yet (ZooKeeper cluster mode is not available); use --bootstrap-server host:port", tool)}
}

// Report prints err as one line on w and returns the exit status: the
// ExitError's code, else 1; 0 for nil.
func Report(w io.Writer, prefix string, err error) int {
	if err == nil {
		return 0
	}
	msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " ")
	fmt.Fprintln(w, prefix+msg)
	var ee *ExitError
	if errors.As(err, &ee) && ee.Code != 0 {
		return ee.Code
	}
	return 1
}
