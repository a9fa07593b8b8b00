package zkstore

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"go.uber.org/zap"

	"gregor/config"
	"gregor/replication/metastore"
)

// ErrBadConnect: a zookeeper.connect value does not parse.
var ErrBadConnect = errors.New("zkstore: bad zookeeper.connect")

// ParseConnect splits a zookeeper.connect value,
// "host:port[,host:port…][/chroot]", into its servers and chroot ("" when
// none). As in Kafka (and ZooKeeper's ConnectStringParser) the chroot
// applies to the whole ensemble and follows the last server; a server
// without a port gets 2181. A chroot of "/" is no chroot.
func ParseConnect(connect string) (servers []string, chroot string, err error) {
	s := strings.TrimSpace(connect)
	if i := strings.IndexByte(s, '/'); i >= 0 {
		s, chroot = s[:i], s[i:]
		if chroot == "/" {
			chroot = ""
		} else if err := metastore.ValidatePath(chroot); err != nil {
			return nil, "", fmt.Errorf("%w %q: chroot %q is not a valid znode path", ErrBadConnect, connect, chroot)
		}
	}
	for _, hp := range strings.Split(s, ",") {
		hp = strings.TrimSpace(hp)
		if hp == "" {
			continue
		}
		host, port, err := net.SplitHostPort(hp)
		if err != nil {
			// No port: ZooKeeper's default client port.
			host, port = strings.TrimSuffix(strings.TrimPrefix(hp, "["), "]"), "2181"
		}
		if host == "" || port == "" {
			return nil, "", fmt.Errorf("%w %q: server %q", ErrBadConnect, connect, hp)
		}
		servers = append(servers, net.JoinHostPort(host, port))
	}
	if len(servers) == 0 {
		return nil, "", fmt.Errorf("%w %q: no servers", ErrBadConnect, connect)
	}
	return servers, chroot, nil
}

// ConfigFromBroker takes the session settings from the broker's config:
// zookeeper.session.timeout.ms and zookeeper.connection.timeout.ms. Use
// with Open(b.ZookeeperConnect, …).
func ConfigFromBroker(b *config.Broker, log *zap.Logger) Config {
	return Config{SessionTimeout: b.ZookeeperSessionTimeout, ConnectionTimeout: b.ZookeeperConnectionTimeout, Logger: log}
}
