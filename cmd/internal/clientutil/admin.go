package clientutil

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// AdminClient is the client of the admin tools (kafka-topics.sh,
// kafka-configs.sh, kafka-consumer-groups.sh): bootstrap is the
// --bootstrap-server value, props the --command-config client properties
// (may be nil; mapped as ConsumerOptions). A bad bootstrap list is a Usage
// error; bad properties are returned as ConsumerOptions reports them. The
// caller closes the client (kadm.Client.Close closes the kgo client too).
func AdminClient(bootstrap string, props map[string]string) (*kadm.Client, error) {
	seeds, err := ParseBootstrap("--bootstrap-server", bootstrap)
	if err != nil {
		return nil, Usage("%v", err)
	}
	co, err := ConsumerOptions(props)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(append(co.Opts, kgo.SeedBrokers(seeds...))...)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", bootstrap, err)
	}
	return kadm.NewClient(cl), nil
}
