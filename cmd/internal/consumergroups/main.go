package consumergroups

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/cmd/internal/clientutil"
)

// Timeout bounds one command (connecting included), like the admin client's
// default.api.timeout.ms.
var Timeout = 60 * time.Second

// Main runs kafka-consumer-groups.sh with parsed options and returns the
// exit status: 0 on success, 1 with one "Error: …" line on stderr.
// commandConfig holds --command-config client properties (may be nil).
func Main(ctx context.Context, o Options, commandConfig map[string]string, stdout, stderr io.Writer) int {
	if err := o.Check(); err != nil {
		return clientutil.Report(stderr, "Error: ", clientutil.Usage("%v", err))
	}
	seeds, err := clientutil.ParseBootstrap("--bootstrap-server", o.BootstrapServer)
	if err != nil {
		return clientutil.Report(stderr, "Error: ", clientutil.Usage("%v", err))
	}
	co, err := clientutil.ConsumerOptions(commandConfig)
	if err != nil {
		return clientutil.Report(stderr, "Error: ", err)
	}
	cl, err := kgo.NewClient(append(co.Opts, kgo.SeedBrokers(seeds...))...)
	if err != nil {
		return clientutil.Report(stderr, "Error: ", fmt.Errorf("connecting to %s: %w", o.BootstrapServer, err))
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	return clientutil.Report(stderr, "Error: ", Run(ctx, o, kadm.NewClient(cl), stdout))
}
