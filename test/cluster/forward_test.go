package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"gregor/replication/zkmeta"
	"gregor/test/harness"
	"gregor/test/zkharness"
)

// sendTo sends req to the broker at addr alone (not routed to the
// controller, as kgo's Client.Request would) and returns its response.
func sendTo(t *testing.T, addr string, req kmsg.Request, timeout time.Duration, opts ...kgo.Opt) (kmsg.Response, error) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return cl.SeedBrokers()[0].Request(ctx, req)
}

// nonController is a running broker that does not hold /controller.
func (c *cluster) nonController() int32 {
	c.t.Helper()
	var ctrl int32
	c.waitFor("a controller", 30*time.Second, func() (bool, string) {
		ctrl = c.controllerID()
		return ctrl > 0, fmt.Sprint(ctrl)
	})
	for id := int32(1); ; id++ {
		if b := c.brokers[id]; b != nil && b.Running() && id != ctrl {
			return id
		}
	}
}

func createTopicsReq(timeoutMs int32, validateOnly bool, partitions int32, rf int16, names ...string) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis, req.ValidateOnly = timeoutMs, validateOnly
	for _, n := range names {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = n, partitions, rf
		req.Topics = append(req.Topics, t)
	}
	return req
}

// TestForwardToController: every controller-only admin request sent to a
// broker that is not the controller is carried out by the controller
// (KIP-590 forwarding) and answered with its result, not NOT_CONTROLLER:
// CreateTopics (validate-only creating nothing, a second create
// TOPIC_ALREADY_EXISTS), CreatePartitions, ElectLeaders,
// AlterPartitionReassignments, ListPartitionReassignments, DeleteTopics;
// ZooKeeper shows each change.
func TestForwardToController(t *testing.T) {
	c := startCluster(t, 3, nil, nil)
	n := c.nonController()
	addr := c.brokers[n].Addr()
	t.Logf("controller %d, asking broker %d", c.controllerID(), n)
	const topic = "fwd"

	kr, err := sendTo(t, addr, createTopicsReq(30000, true, 2, 3, "fwd-validate"), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rt := kr.(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != 0 || rt.NumPartitions != 2 || rt.ReplicationFactor != 3 {
		t.Fatalf("validate-only create through broker %d: %s %v partitions %d rf %d", n, codeName(rt.ErrorCode), strp(rt.ErrorMessage), rt.NumPartitions, rt.ReplicationFactor)
	}
	if _, _, err := c.store.Get(zkmeta.TopicPath("fwd-validate")); err == nil {
		t.Fatal("validate-only create wrote /brokers/topics/fwd-validate")
	}

	kr, err = sendTo(t, addr, createTopicsReq(30000, false, 2, 3, topic), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rt := kr.(*kmsg.CreateTopicsResponse).Topics[0]
	if rt.ErrorCode != 0 || rt.NumPartitions != 2 || rt.ReplicationFactor != 3 || rt.TopicID == ([16]byte{}) || len(rt.Configs) == 0 {
		t.Fatalf("create through broker %d: %s %v partitions %d rf %d id %x configs %d", n, codeName(rt.ErrorCode), strp(rt.ErrorMessage), rt.NumPartitions, rt.ReplicationFactor, rt.TopicID, len(rt.Configs))
	}
	for p := int32(0); p < 2; p++ {
		if st, ok := c.partitionState(topic, p); !ok || len(st.ISR) == 0 {
			t.Fatalf("partition %d state %+v %v after the create", p, st, ok)
		}
	}
	kr, err = sendTo(t, addr, createTopicsReq(30000, false, 2, 3, topic), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != kerr.TopicAlreadyExists.Code {
		t.Fatalf("second create: %s, want TOPIC_ALREADY_EXISTS", codeName(code))
	}

	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.TimeoutMillis = 30000
	cpt := kmsg.NewCreatePartitionsRequestTopic()
	cpt.Topic, cpt.Count = topic, 4
	cp.Topics = append(cp.Topics, cpt)
	kr, err = sendTo(t, addr, cp, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r := kr.(*kmsg.CreatePartitionsResponse).Topics[0]; r.ErrorCode != 0 {
		t.Fatalf("create partitions through broker %d: %s %v", n, codeName(r.ErrorCode), strp(r.ErrorMessage))
	}
	if _, ok := c.partitionState(topic, 3); !ok {
		t.Fatal("no state for partition 3 after CreatePartitions")
	}

	el := kmsg.NewPtrElectLeadersRequest()
	el.TimeoutMillis = 30000
	elt := kmsg.NewElectLeadersRequestTopic()
	elt.Topic, elt.Partitions = topic, []int32{0, 1}
	el.Topics = append(el.Topics, elt)
	kr, err = sendTo(t, addr, el, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	er := kr.(*kmsg.ElectLeadersResponse)
	if er.ErrorCode != 0 || len(er.Topics) != 1 || len(er.Topics[0].Partitions) != 2 {
		t.Fatalf("elect leaders through broker %d: %s %+v", n, codeName(er.ErrorCode), er.Topics)
	}
	for _, p := range er.Topics[0].Partitions {
		// The preferred leaders lead already: the controller's answer.
		if p.ErrorCode != kerr.ElectionNotNeeded.Code {
			t.Fatalf("elect partition %d: %s %v, want ELECTION_NOT_NEEDED", p.Partition, codeName(p.ErrorCode), strp(p.ErrorMessage))
		}
	}

	data, _, err := c.store.Get(zkmeta.TopicPath(topic))
	if err != nil {
		t.Fatal(err)
	}
	asg, err := zkmeta.DecodeTopicAssignment(topic, data)
	if err != nil {
		t.Fatal(err)
	}
	cur := asg.Partitions[0]
	want := []int32{cur[1], cur[2], cur[0]} // same replicas, another preferred leader
	ar := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	ar.TimeoutMillis = 30000
	art := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	art.Topic = topic
	arp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	arp.Partition, arp.Replicas = 0, want
	art.Partitions = append(art.Partitions, arp)
	ar.Topics = append(ar.Topics, art)
	kr, err = sendTo(t, addr, ar, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	arr := kr.(*kmsg.AlterPartitionAssignmentsResponse)
	if arr.ErrorCode != 0 || len(arr.Topics) != 1 || arr.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("reassign through broker %d: %s %v %+v", n, codeName(arr.ErrorCode), strp(arr.ErrorMessage), arr.Topics)
	}
	c.waitFor("the reassignment in /brokers/topics/fwd", 30*time.Second, func() (bool, string) {
		data, _, err := c.store.Get(zkmeta.TopicPath(topic))
		if err != nil {
			return false, err.Error()
		}
		a, err := zkmeta.DecodeTopicAssignment(topic, data)
		if err != nil {
			return false, err.Error()
		}
		return fmt.Sprint(a.Partitions[0]) == fmt.Sprint(want), fmt.Sprint(a.Partitions[0])
	})
	lr := kmsg.NewPtrListPartitionReassignmentsRequest()
	lr.TimeoutMillis = 30000
	kr, err = sendTo(t, addr, lr, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if lrr := kr.(*kmsg.ListPartitionReassignmentsResponse); lrr.ErrorCode != 0 {
		t.Fatalf("list reassignments through broker %d: %s %v", n, codeName(lrr.ErrorCode), strp(lrr.ErrorMessage))
	}

	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.TimeoutMillis = 30000
	name := topic
	dtt := kmsg.NewDeleteTopicsRequestTopic()
	dtt.Topic = &name
	dt.Topics, dt.TopicNames = append(dt.Topics, dtt), []string{topic}
	kr, err = sendTo(t, addr, dt, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if r := kr.(*kmsg.DeleteTopicsResponse).Topics[0]; r.ErrorCode != 0 {
		t.Fatalf("delete through broker %d: %s %v", n, codeName(r.ErrorCode), strp(r.ErrorMessage))
	}
	if _, _, err := c.store.Get(zkmeta.TopicPath(topic)); err == nil {
		t.Fatal("/brokers/topics/fwd still there after the forwarded delete answered")
	}
}

// TestForwardControllerKilled: with the controller SIGKILLed (its
// /controller znode lives until its session expires), a CreateTopics
// through another broker with a 2 s timeout answers a retriable error
// (REQUEST_TIMED_OUT or NOT_CONTROLLER) within its timeout and a margin,
// never hangs; one with a timeout longer than the election succeeds once
// a new controller is elected.
func TestForwardControllerKilled(t *testing.T) {
	c := startCluster(t, 3, nil, nil)
	old := c.controllerID()
	c.brokers[old].Kill()
	var n int32
	for id := int32(1); id <= 3; id++ {
		if id != old {
			n = id
			break
		}
	}
	addr := c.brokers[n].Addr()

	start := time.Now()
	kr, err := sendTo(t, addr, createTopicsReq(2000, false, 1, 2, "during"), 30*time.Second)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	code := kr.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode
	t.Logf("create during the election: %s after %v", codeName(code), took.Round(time.Millisecond))
	if took > 2*time.Second+5*time.Second {
		t.Fatalf("answered after %v, the request's timeout is 2 s", took)
	}
	if code != 0 && code != kerr.RequestTimedOut.Code && code != kerr.NotController.Code {
		t.Fatalf("create during the election: %s, want success or a retriable error", codeName(code))
	}

	kr, err = sendTo(t, addr, createTopicsReq(int32((sessionTimeout+30*time.Second)/time.Millisecond), false, 1, 2, "after"), sessionTimeout+40*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rt := kr.(*kmsg.CreateTopicsResponse).Topics[0]; rt.ErrorCode != 0 {
		t.Fatalf("create across the election: %s %v (controller now %d)", codeName(rt.ErrorCode), strp(rt.ErrorMessage), c.controllerID())
	}
	if ctrl := c.controllerID(); ctrl == old || ctrl < 0 {
		t.Fatalf("controller %d after the create, the killed one was %d", ctrl, old)
	}
	if _, _, err := c.store.Get(zkmeta.TopicPath("after")); err != nil {
		t.Fatalf("/brokers/topics/after: %v", err)
	}
}

// TestForwardAuthorizedOnReceivingBroker: the brokers talk to each other
// as User:ANONYMOUS (PLAINTEXT, a super user); clients log in with PLAIN
// on a SASL_PLAINTEXT listener. Bob, with Create on topic bob-ok alone,
// sends one CreateTopics for bob-ok and bob-denied to a broker that is not
// the controller: bob-ok is created by the controller, bob-denied gets
// TOPIC_AUTHORIZATION_FAILED and does not exist — forwarding does not
// lend him the broker's identity. His DeleteTopics of bob-ok and his
// ElectLeaders (no cluster Alter) are refused there too.
func TestForwardAuthorizedOnReceivingBroker(t *testing.T) {
	saslAddr := map[int32]string{}
	c := startClusterEach(t, zkharness.Options{}, 3, map[string]string{
		"sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required ` +
			`user_bob="bob-secret";`,
		"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
		"super.users":           "User:ANONYMOUS",
	}, nil, func(id int32) map[string]string {
		saslAddr[id] = fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
		return map[string]string{"listeners": "SASL_PLAINTEXT://" + saslAddr[id]}
	})
	n := c.nonController()
	gregorTool(t, "acls", "--bootstrap-server", c.brokers[1].Addr(), "--add", "--allow-principal", "User:bob",
		"--operation", "Create", "--operation", "Delete", "--topic", "bob-ok")
	bob := kgo.SASL(plain.Auth{User: "bob", Pass: "bob-secret"}.AsMechanism())

	// The ACL reaches broker n through its watcher: poll with validate-only.
	c.waitFor("bob's Create ACL on broker "+fmt.Sprint(n), 20*time.Second, func() (bool, string) {
		kr, err := sendTo(t, saslAddr[n], createTopicsReq(10000, true, 1, 3, "bob-ok"), 15*time.Second, bob)
		if err != nil {
			return false, err.Error()
		}
		code := kr.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode
		return code == 0, codeName(code)
	})
	kr, err := sendTo(t, saslAddr[n], createTopicsReq(30000, false, 1, 3, "bob-ok", "bob-denied"), 30*time.Second, bob)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int16{}
	for _, rt := range kr.(*kmsg.CreateTopicsResponse).Topics {
		got[rt.Topic] = rt.ErrorCode
	}
	if got["bob-ok"] != 0 || got["bob-denied"] != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("bob's create through broker %d: bob-ok %s, bob-denied %s", n, codeName(got["bob-ok"]), codeName(got["bob-denied"]))
	}
	if _, _, err := c.store.Get(zkmeta.TopicPath("bob-ok")); err != nil {
		t.Fatalf("/brokers/topics/bob-ok: %v", err)
	}
	if _, _, err := c.store.Get(zkmeta.TopicPath("bob-denied")); err == nil {
		t.Fatal("bob-denied was created through the forwarding broker")
	}

	el := kmsg.NewPtrElectLeadersRequest()
	el.TimeoutMillis = 10000
	elt := kmsg.NewElectLeadersRequestTopic()
	elt.Topic, elt.Partitions = "bob-ok", []int32{0}
	el.Topics = append(el.Topics, elt)
	kr, err = sendTo(t, saslAddr[n], el, 15*time.Second, bob)
	if err != nil {
		t.Fatal(err)
	}
	if code := kr.(*kmsg.ElectLeadersResponse).ErrorCode; code != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("bob's elect leaders through broker %d: %s, want CLUSTER_AUTHORIZATION_FAILED", n, codeName(code))
	}

	dt := kmsg.NewPtrDeleteTopicsRequest()
	dt.TimeoutMillis = 30000
	dt.TopicNames = []string{"bob-ok", "__consumer_offsets"}
	for _, name := range dt.TopicNames {
		name := name
		t := kmsg.NewDeleteTopicsRequestTopic()
		t.Topic = &name
		dt.Topics = append(dt.Topics, t)
	}
	kr, err = sendTo(t, saslAddr[n], dt, 30*time.Second, bob)
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]int16{}
	for _, rt := range kr.(*kmsg.DeleteTopicsResponse).Topics {
		got[*rt.Topic] = rt.ErrorCode
	}
	if got["bob-ok"] != 0 || got["__consumer_offsets"] != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("bob's delete through broker %d: bob-ok %s, __consumer_offsets %s", n, codeName(got["bob-ok"]), codeName(got["__consumer_offsets"]))
	}
}

func strp(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
