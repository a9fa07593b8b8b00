package cluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/replication/metastore"
)

// TestClusterACLs: two brokers on a real ZooKeeper with the AclAuthorizer
// (allow.everyone.if.no.acl.found=true, so the brokers' own plaintext
// traffic, which has no ACL, keeps flowing). An ACL created through broker
// 1 lands in ZooKeeper in Kafka's layout and is enforced by broker 2 once
// its watcher follows the change notification; an ACL written straight
// into ZooKeeper the way Kafka's tools write it is enforced by both.
func TestClusterACLs(t *testing.T) {
	c := startCluster(t, 2, map[string]string{
		"authorizer.class.name":          "kafka.security.authorizer.AclAuthorizer",
		"allow.everyone.if.no.acl.found": "true",
	}, nil)
	c.createTopic("zt", 1, 2, nil)
	c.createTopic("zk-direct", 1, 2, nil)
	b1, b2 := c.brokers[1], c.brokers[2]
	if code, _ := rawProduce(t, b2.Addr(), "zt", 0, -1, 5*time.Second, "before"); code != 0 && code != kerr.NotLeaderForPartition.Code {
		t.Fatalf("produce before any ACL: %s", codeName(code))
	}

	// Through broker 1 only.
	cl, err := kgo.NewClient(kgo.SeedBrokers(b1.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := kadm.NewClient(cl).CreateACLs(ctx, kadm.NewACLs().Topics("zt").Deny("User:*").DenyHosts("*").Operations(kadm.OpWrite))
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("CreateACLs through broker 1: %v %+v", err, res)
	}
	data, _, err := c.store.Get("/kafka-acl/Topic/zt")
	if want := `{"version":1,"acls":[{"principal":"User:*","permissionType":"Deny","operation":"Write","host":"*"}]}`; err != nil || string(data) != want {
		t.Fatalf("/kafka-acl/Topic/zt = %s, %v; want %s", data, err, want)
	}
	kids, err := c.store.Children("/kafka-acl-changes")
	if err != nil || len(kids) == 0 || !strings.HasPrefix(kids[len(kids)-1], "acl_changes_") {
		t.Fatalf("/kafka-acl-changes children %v, %v", kids, err)
	}
	c.waitFor("broker 2 to refuse writes to zt", 10*time.Second, func() (bool, string) {
		code, _ := rawProduce(t, b2.Addr(), "zt", 0, -1, 5*time.Second, "after")
		return code == kerr.TopicAuthorizationFailed.Code, codeName(code)
	})

	// Kafka's tools (kafka-acls.sh --authorizer-properties zookeeper.connect=…)
	// write the resource node, then the change notification.
	if err := metastore.CreateAll(c.store, "/kafka-acl/Topic/zk-direct",
		[]byte(`{"version":1,"acls":[{"host":"*","permissionType":"Deny","operation":"All","principal":"User:ANONYMOUS"}]}`), false); err != nil {
		t.Fatal(err)
	}
	if _, err := c.store.CreateSequential("/kafka-acl-changes/acl_changes_", []byte("Topic:zk-direct"), false); err != nil {
		t.Fatal(err)
	}
	for id, b := range c.brokers {
		c.waitFor(fmt.Sprintf("broker %d to apply the ACL written in ZooKeeper", id), 10*time.Second, func() (bool, string) {
			code, _ := rawProduce(t, b.Addr(), "zk-direct", 0, -1, 5*time.Second, "x")
			return code == kerr.TopicAuthorizationFailed.Code, codeName(code)
		})
	}
}
