package clientutil

import (
	"fmt"
	"os"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// AdminClient is the client of the admin tools (kafka-topics.sh,
// kafka-configs.sh, kafka-consumer-groups.sh): bootstrap is the
// --bootstrap-server value, props the --command-config client properties
// (may be nil; mapped as ConsumerOptions, security included; ignored
// and unused keys are warned about on stderr). A bad bootstrap list is a Usage
// error; bad properties are returned as ConsumerOptions reports them. The
// caller closes the client (kadm.Client.Close closes the kgo client too).
func AdminClient(bootstrap string, props map[string]string) (*kadm.Client, error) {
	cl, err := AdminKgoClient(bootstrap, props)
	if err != nil {
		return nil, err
	}
	return kadm.NewClient(cl), nil
}

// AdminKgoClient is the kgo client under AdminClient, for a tool that also
// sends requests kadm does not shape the way it needs (a request to one
// named broker, a request field kadm does not set); wrap it with
// kadm.NewClient for the rest. Errors as AdminClient's; the caller closes
// it.
func AdminKgoClient(bootstrap string, props map[string]string) (*kgo.Client, error) {
	seeds, err := ParseBootstrap("--bootstrap-server", bootstrap)
	if err != nil {
		return nil, Usage("%v", err)
	}
	co, err := ConsumerOptions(props)
	if err != nil {
		return nil, err
	}
	// Kafka's AdminClient warns about unknown and unused keys too.
	co.Warn(os.Stderr)
	cl, err := kgo.NewClient(append(co.Opts, kgo.SeedBrokers(seeds...))...)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", bootstrap, err)
	}
	return cl, nil
}
