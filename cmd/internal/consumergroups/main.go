package consumergroups

import (
	"context"
	"io"
	"time"

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
	adm, err := clientutil.AdminClient(o.BootstrapServer, commandConfig)
	if err != nil {
		return clientutil.Report(stderr, "Error: ", err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	return clientutil.Report(stderr, "Error: ", Run(ctx, o, adm, stdout))
}
