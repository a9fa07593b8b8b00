package topics

import (
	"context"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"gregor/cmd/internal/clientutil"
)

// Timeout bounds one topic command (connecting included), like the admin
// client's default.api.timeout.ms.
var Timeout = 60 * time.Second

// Main runs kafka-topics.sh with parsed options and returns the exit
// status: 0 on success; 1 with one line on stderr for errors; 2 for
// --zookeeper while no ZooKeeperAdmin is plugged in. commandConfig holds
// --command-config client properties (may be nil).
func Main(ctx context.Context, o Options, commandConfig map[string]string, stdout, stderr io.Writer) int {
	if err := o.Check(); err != nil {
		return clientutil.Report(stderr, ErrorPrefix, err)
	}
	admin, err := connect(o, commandConfig)
	if err != nil {
		return clientutil.Report(stderr, ErrorPrefix, err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	return clientutil.Report(stderr, ErrorPrefix, Run(ctx, o, admin, stdout))
}

// connect picks the Admin: the Kafka protocol when --bootstrap-server is
// given (it wins over --zookeeper, as in Kafka 2.x), else ZooKeeper.
func connect(o Options, props map[string]string) (Admin, error) {
	if o.BootstrapServer == "" {
		if ZooKeeperAdmin == nil {
			return nil, clientutil.ZooKeeperUnsupported("kafka-topics")
		}
		a, err := ZooKeeperAdmin(o.ZooKeeper)
		if za, ok := a.(*ZkAdmin); ok {
			za.DisableRackAware = o.DisableRackAware
		}
		return a, err
	}
	cl, err := clientutil.AdminKgoClient(o.BootstrapServer, props)
	if err != nil {
		return nil, err
	}
	return KadmAdmin{Adm: kadm.NewClient(cl), Cl: cl}, nil
}
