package consoleconsumer

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"gregor/cmd/internal/clientutil"
	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
	"gregor/replication/zkstore"
)

// ZooKeeperTimeout bounds the ZooKeeper session set-up of --zookeeper
// (Kafka's old consumer used zookeeper.connection.timeout.ms = 6000).
var ZooKeeperTimeout = 6 * time.Second

// BootstrapFromZooKeeper resolves the --zookeeper form: it reads the
// registered brokers under connect ("host:port[,host:port…][/chroot]"),
// /brokers/ids/<id>, and returns their addresses as a --bootstrap-server
// value ("host:port,host:port", ordered by broker id). Each broker
// contributes its PLAINTEXT endpoint, else its first endpoint. Errors: a
// bad connect string (exit 1), no session within ZooKeeperTimeout, no
// registered broker.
func BootstrapFromZooKeeper(connect string) (string, error) {
	s, bs, err := openZooKeeper(connect)
	if err != nil {
		return "", err
	}
	s.Close()
	return bs, nil
}

// openZooKeeper opens a session on connect and reads the brokers'
// addresses (as BootstrapFromZooKeeper); the caller closes the store.
func openZooKeeper(connect string) (*zkstore.Store, string, error) {
	s, err := zkstore.Open(connect, zkstore.Config{SessionTimeout: ZooKeeperTimeout})
	if err != nil {
		if errors.Is(err, zkstore.ErrBadConnect) {
			return nil, "", clientutil.Usage("--zookeeper: %v", err)
		}
		return nil, "", err
	}
	bs, err := brokerAddrs(s, strings.Join(s.Servers(), ",")+s.Chroot())
	if err != nil {
		s.Close()
		return nil, "", err
	}
	return s, bs, nil
}

// brokerAddrs lists the registered brokers' addresses; where names the
// ensemble in the error.
func brokerAddrs(s metastore.Store, where string) (string, error) {
	kids, err := s.Children(zkmeta.BrokerIDsPath)
	if err != nil && !errors.Is(err, metastore.ErrNoNode) {
		return "", err
	}
	ids := make([]int32, 0, len(kids))
	for _, k := range kids {
		if id, err := strconv.ParseInt(k, 10, 32); err == nil {
			ids = append(ids, int32(id))
		}
	}
	// Children are sorted as strings; order numerically.
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	var addrs []string
	for _, id := range ids {
		data, _, err := s.Get(zkmeta.BrokerPath(id))
		if errors.Is(err, metastore.ErrNoNode) {
			continue // went away meanwhile
		}
		if err != nil {
			return "", err
		}
		b, err := zkmeta.DecodeBrokerInfo(id, data)
		if err != nil || len(b.Endpoints) == 0 {
			continue
		}
		ep := b.Endpoints[0]
		for _, e := range b.Endpoints {
			if e.SecurityProtocol == "PLAINTEXT" {
				ep = e
				break
			}
		}
		addrs = append(addrs, net.JoinHostPort(ep.Host, strconv.Itoa(int(ep.Port))))
	}
	if len(addrs) == 0 {
		return "", fmt.Errorf("no broker is registered under /brokers/ids in ZooKeeper %s", where)
	}
	return strings.Join(addrs, ","), nil
}
