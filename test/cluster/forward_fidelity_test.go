package cluster

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"gregor/replication/zkmeta"
)

// sendAt sends req to the broker at addr alone at version v (kgo sends
// the newest version both sides serve, so the client's maximum is v).
func sendAt(t *testing.T, addr string, req kmsg.Request, v int16) kmsg.Response {
	t.Helper()
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(req.Key(), v)
	kr, err := sendTo(t, addr, req, 40*time.Second, kgo.MaxVersions(vs), kgo.ClientID("fidelity"))
	if err != nil {
		t.Fatalf("%s v%d to %s: %v", kmsg.NameForKey(req.Key()), v, addr, err)
	}
	if kr.GetVersion() != v {
		t.Fatalf("%s answered at v%d, sent at v%d", kmsg.NameForKey(req.Key()), kr.GetVersion(), v)
	}
	return kr
}

// answer is a response as JSON, without its throttle time and with the
// case's topic suffix sfx written as "-X", so that the answers to the same
// request about differently named topics compare equal.
func answer(t *testing.T, r kmsg.Response, sfx string) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "ThrottleMillis")
	b, _ = json.Marshal(m)
	if sfx == "" {
		return string(b)
	}
	return strings.ReplaceAll(string(b), sfx, "-X")
}

func newTopic(name string, parts int32, rf int16, asg ...[]int32) kmsg.CreateTopicsRequestTopic {
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, parts, rf
	for i, rs := range asg {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(i), rs
		t.ReplicaAssignment = append(t.ReplicaAssignment, a)
	}
	return t
}

// TestForwardedAnswersMatchController: bad CreateTopics, DeleteTopics and
// CreatePartitions requests, at every version, get the same answer (error
// codes and messages) from a broker that is not the controller as from the
// controller, and change nothing. Found by a review: a forwarded
// CreateTopics with both a partition count and an assignment went out
// with -1/-1, so the controller's INVALID_REQUEST was lost (at v0 the
// topic was created); a DeleteTopics v6 entry named "" came back with a
// null name, which the forwarder read as missing (UNKNOWN_SERVER_ERROR);
// a duplicate topic's message was not Kafka's; __cluster_metadata could
// be created (Kafka 3.9 refuses it).
func TestForwardedAnswersMatchController(t *testing.T) {
	c := startCluster(t, 3, nil, nil)
	c.createTopic("base", 3, 3, nil)
	n, ctrl := c.nonController(), c.controllerID()
	via, direct := c.brokers[n].Addr(), c.brokers[ctrl].Addr()
	t.Logf("controller %d, asking broker %d", ctrl, n)

	create := func(validateOnly bool, topics ...kmsg.CreateTopicsRequestTopic) func(string) kmsg.Request {
		return func(sfx string) kmsg.Request {
			r := kmsg.NewPtrCreateTopicsRequest()
			r.TimeoutMillis, r.ValidateOnly = 30000, validateOnly
			for _, t := range topics {
				t.Topic = strings.ReplaceAll(t.Topic, "-X", sfx)
				r.Topics = append(r.Topics, t)
			}
			return r
		}
	}
	del := func(names ...string) func(string) kmsg.Request {
		return func(sfx string) kmsg.Request {
			r := kmsg.NewPtrDeleteTopicsRequest()
			r.TimeoutMillis = 30000
			for _, n := range names {
				n := strings.ReplaceAll(n, "-X", sfx)
				r.TopicNames = append(r.TopicNames, n)
				t := kmsg.NewDeleteTopicsRequestTopic()
				t.Topic = &n
				r.Topics = append(r.Topics, t)
			}
			return r
		}
	}
	// delNeither is a v6 entry with neither a name nor an id (beside a
	// named one, which goes on to be answered as usual).
	delNeither := func(sfx string) kmsg.Request {
		r := kmsg.NewPtrDeleteTopicsRequest()
		r.TimeoutMillis = 30000
		named := kmsg.NewDeleteTopicsRequestTopic()
		named.Topic = kmsg.StringPtr("nosuch" + sfx)
		r.Topics = append(r.Topics, kmsg.NewDeleteTopicsRequestTopic(), named)
		return r
	}
	grow := func(validateOnly bool, topic string, count int32, asg ...[]int32) func(string) kmsg.Request {
		return func(sfx string) kmsg.Request {
			r := kmsg.NewPtrCreatePartitionsRequest()
			r.TimeoutMillis, r.ValidateOnly = 30000, validateOnly
			t := kmsg.NewCreatePartitionsRequestTopic()
			t.Topic, t.Count = strings.ReplaceAll(topic, "-X", sfx), count
			for _, rs := range asg {
				a := kmsg.NewCreatePartitionsRequestTopicAssignment()
				a.Replicas = rs
				t.Assignment = append(t.Assignment, a)
			}
			r.Topics = append(r.Topics, t)
			return r
		}
	}
	versions := func(lo, hi int16) []int16 {
		var vs []int16
		for v := lo; v <= hi; v++ {
			vs = append(vs, v)
		}
		return vs
	}
	for _, tc := range []struct {
		name string
		mk   func(sfx string) kmsg.Request
		vs   []int16
		want string // a fragment the controller's answer at the newest version holds
	}{
		{"duplicate", create(false, newTopic("dup-X", 1, 1), newTopic("dup-X", 1, 1)), versions(0, 7), `"ErrorMessage":"Found multiple entries for this topic."`},
		{"empty name", create(false, newTopic("", 1, 1)), versions(0, 7), `"ErrorCode":17`},
		{"illegal name", create(false, newTopic("a b-X", 1, 1)), versions(0, 7), `"ErrorCode":17`},
		{"negative partitions", create(false, newTopic("neg-X", -5, 1)), versions(0, 7), `"ErrorCode":37`},
		{"zero replication factor", create(false, newTopic("rf-X", 1, 0)), versions(0, 7), `"ErrorCode":38`},
		{"replication factor over the brokers", create(false, newTopic("rf4-X", 1, 4)), versions(0, 7), `"ErrorCode":38`},
		{"count and assignment", create(false, newTopic("both-X", 1, -1, []int32{1, 2})), versions(0, 7),
			`"ErrorMessage":"Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time."`},
		{"count and assignment, validate only", create(true, newTopic("bothv-X", -1, 2, []int32{1, 2})), versions(1, 7), `"ErrorCode":42`},
		{"unknown broker in assignment", create(true, newTopic("asg-X", -1, -1, []int32{1, 9})), versions(1, 7), `"ErrorCode":39`},
		{"exists", create(false, newTopic("base", 1, 1)), versions(0, 7), `"ErrorCode":36`},
		{"KRaft's metadata topic", create(false, newTopic("__cluster_metadata", 1, 1)), versions(0, 7),
			`"ErrorCode":42,"ErrorMessage":"Creation of internal topic __cluster_metadata is prohibited."`},
		{"delete unknown", del("nosuch-X"), versions(0, 6), `"ErrorCode":3`},
		{"delete unknown twice", del("nosuch-X", "nosuch-X"), versions(0, 6), `"ErrorCode":3`},
		{"delete empty name", del(""), versions(0, 6), `"ErrorCode":3,"ErrorMessage":"This server does not host this topic-partition.","Topic":""`},
		{"delete with neither name nor id", delNeither, versions(6, 6), `{"ErrorCode":29,"ErrorMessage":null,"Topic":null,"TopicID":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]`},
		{"grow unknown", grow(false, "nosuch-X", 5), versions(0, 3), `"ErrorCode":3`},
		{"grow to fewer", grow(false, "base", 1), versions(0, 3), `"ErrorCode":37`},
		{"grow to negative", grow(false, "base", -3), versions(0, 3), `"ErrorCode":37`},
		{"grow with a short assignment", grow(true, "base", 5, []int32{1, 2, 3}), versions(0, 3), `"ErrorCode":39`},
	} {
		for _, v := range tc.vs {
			sv, sc := fmt.Sprintf("-v%d-via", v), fmt.Sprintf("-v%d-ctl", v)
			a := answer(t, sendAt(t, via, tc.mk(sv), v), sv)
			b := answer(t, sendAt(t, direct, tc.mk(sc), v), sc)
			if a != b {
				t.Errorf("%s v%d:\n through broker %d: %s\n on the controller: %s", tc.name, v, n, a, b)
			}
			if v == tc.vs[len(tc.vs)-1] && !strings.Contains(b, tc.want) {
				t.Errorf("%s v%d on the controller: %s; want %s in it", tc.name, v, b, tc.want)
			}
		}
	}
	// Nothing above was valid: no topic but base was created.
	kids, err := c.store.Children(zkmeta.TopicsPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kids {
		if k != "base" && k != "__consumer_offsets" {
			t.Errorf("topic %s was created by a request the controller refuses", k)
		}
	}
}

// TestDeleteTopicsNameAndID: a DeleteTopics v6 entry with both a name and a
// topic id is Kafka's InvalidRequestException ("Topic name and topic ID
// can not both be specified."): every entry answers INVALID_REQUEST and
// nothing is deleted, on the controller and through another broker. Found
// by a review: the name won and that topic was deleted, whatever the id.
func TestDeleteTopicsNameAndID(t *testing.T) {
	c := startCluster(t, 3, nil, nil)
	c.createTopic("keep", 1, 3, nil)
	c.createTopic("other", 1, 3, nil)
	n, ctrl := c.nonController(), c.controllerID()
	d, err := describe(t, c.brokers[ctrl], "other")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int32{n, ctrl} {
		r := kmsg.NewPtrDeleteTopicsRequest()
		r.TimeoutMillis = 30000
		name, unknown := "keep", "nosuch"
		both := kmsg.NewDeleteTopicsRequestTopic()
		both.Topic, both.TopicID = &name, d.ID
		plain := kmsg.NewDeleteTopicsRequestTopic()
		plain.Topic = &unknown
		r.Topics = append(r.Topics, both, plain)
		resp := sendAt(t, c.brokers[id].Addr(), r, 6).(*kmsg.DeleteTopicsResponse)
		got := answer(t, resp, "")
		if len(resp.Topics) != 2 {
			t.Fatalf("through broker %d: %s", id, got)
		}
		for i, rt := range resp.Topics {
			if rt.ErrorCode != kerr.InvalidRequest.Code || strp(rt.Topic) != strp(r.Topics[i].Topic) || rt.TopicID != r.Topics[i].TopicID {
				t.Fatalf("through broker %d: %s; want INVALID_REQUEST for each entry, as sent", id, got)
			}
		}
		for _, topic := range []string{"keep", "other"} {
			if _, _, err := c.store.Get(zkmeta.TopicPath(topic)); err != nil {
				t.Fatalf("after the request to broker %d: /brokers/topics/%s: %v", id, topic, err)
			}
		}
	}
}
