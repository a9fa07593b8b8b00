package integration

// The ACL matrix (issue 12, point 7): every client-facing API Gregor
// serves, and the inter-broker ones, sent as a raw request by a
// principal holding exactly the ACLs Kafka's KafkaApis (3.9) checks for
// it, by one holding none and by one holding Describe on everything
// (so a handler that checks a weaker operation than Kafka's is caught).
// The denied principal must get Kafka's error code, and a mutating
// request must have changed nothing; the allowed one must get past
// authorization (the code below, never an authorization error). As
// denied and allowed send the same request, a denied mutation that
// slipped through unseen (the metadata cache follows the store
// asynchronously) also shows as allowed's failure (the topic exists,
// the partitions are already there…). Principals are SASL/PLAIN users on a
// SASL_PLAINTEXT listener; User:admin is the super user that sets up
// the state and reads it back.

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"gregor/storage/record"
	"gregor/test/harness"
)

// passes is the allowed principal's expectation when the exact answer
// depends on more state than the test builds: any code but an
// authorization failure.
const passes int16 = -1000

// authzCodes are the codes that mean "not authorized".
var authzCodes = []int16{
	kerr.TopicAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Code,
	kerr.TransactionalIDAuthorizationFailed.Code, kerr.DelegationTokenAuthorizationFailed.Code,
}

// matrixRow is one API: how to build its request, where its response
// carries error codes, the code Kafka answers the denied principal
// (every code found must be it) and the allowed one (every code must be
// it, or passes). sees, for APIs whose authorization filters rather
// than fails, must hold for allowed and not for denied. state, when
// set, is read (as admin) before and after the denied request — it
// must not move — and after the allowed one, which must move it when
// changes is set.
type matrixRow struct {
	name       string
	maxVersion int16 // pins the request's version (0: negotiated)
	req        func() kmsg.Request
	allowedReq func() kmsg.Request // allowed's request when it differs from denied's
	codes      func(kmsg.Response) []int16
	denied     int16
	allowed    int16
	describeOK bool // Describe suffices (else the describer is refused as denied is)
	sees       func(kmsg.Response) bool
	state      func(t *testing.T) string
	changes    bool
}

// matrixPeer is one principal: its SASL client and, made on first use,
// clients whose maximum version of one API is pinned (by key<<8|version).
type matrixPeer struct {
	name string
	cl   *kgo.Client
	v    map[int16]*kgo.Client
}

// TestACLMatrix runs matrixRows as User:denied (no ACLs),
// User:describer (Describe on every topic, group, transactional id and
// the cluster) and User:allowed (the ACLs below), in that order, against
// one broker with authorizer.class.name set and super.users=User:admin.
func TestACLMatrix(t *testing.T) {
	saslPort := harness.FreePort(t)
	saslAddr := fmt.Sprintf("127.0.0.1:%d", saslPort)
	b := harness.StartBroker(t, map[string]string{
		"listeners":               "SASL_PLAINTEXT://" + saslAddr,
		"sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required ` +
			`username="admin" password="admin-pw" user_admin="admin-pw" user_allowed="allowed-pw" user_denied="denied-pw" ` +
			`user_describer="describer-pw";`,
		"authorizer.class.name": aclAuthorizer,
		"super.users":           "User:admin",
	})
	newClient := func(user string, opts ...kgo.Opt) *kgo.Client {
		return b.Client(append([]kgo.Opt{kgo.SeedBrokers(saslAddr), kgo.SASL(plain.Auth{User: user, Pass: user + "-pw"}.AsMechanism()),
			kgo.RequestRetries(0), kgo.RetryTimeout(5 * time.Second), kgo.RequestTimeoutOverhead(10 * time.Second)}, opts...)...)
	}
	admin := newClient("admin")
	adm := kadm.NewClient(admin)

	// State: topics (mx and mx-rec with 3 records each), groups with a
	// committed offset, an ongoing transaction's producer.
	for _, topic := range []string{"mx", "mx-rec", "mx-del", "mx-alt", "mx-cfg"} {
		res, err := adm.CreateTopic(ctxFor(t, 30*time.Second), 1, 1, nil, topic)
		if err == nil {
			err = res.Err
		}
		if err != nil {
			t.Fatalf("create %s: %v", topic, err)
		}
	}
	for _, topic := range []string{"mx", "mx-rec"} {
		for i := 0; i < 3; i++ {
			if err := admin.ProduceSync(ctxFor(t, 15*time.Second), &kgo.Record{Topic: topic, Value: []byte{byte('a' + i)}}).FirstErr(); err != nil {
				t.Fatalf("produce to %s: %v", topic, err)
			}
		}
	}
	for _, g := range []string{"mx-g", "mx-gdel"} {
		offs := kadm.Offsets{}
		offs.Add(kadm.Offset{Topic: "mx", Partition: 0, At: 1, LeaderEpoch: -1})
		res, err := adm.CommitOffsets(ctxFor(t, 15*time.Second), g, offs)
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			t.Fatalf("commit for %s: %v", g, err)
		}
	}
	initReq := kmsg.NewPtrInitProducerIDRequest()
	txnID := "mx-txn-2"
	initReq.TransactionalID, initReq.TransactionTimeoutMillis, initReq.ProducerID, initReq.ProducerEpoch = &txnID, 60000, -1, -1
	// The first FindCoordinator for a transactional id creates
	// __transaction_state; InitProducerId answers NOT_COORDINATOR or
	// COORDINATOR_LOAD_IN_PROGRESS until its partitions are led.
	find := kmsg.NewPtrFindCoordinatorRequest()
	find.CoordinatorType, find.CoordinatorKey, find.CoordinatorKeys = 1, txnID, []string{txnID}
	var ir *kmsg.InitProducerIDResponse
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := find.RequestWith(ctxFor(t, 15*time.Second), admin.Broker(0)); err != nil {
			t.Fatalf("FindCoordinator for %s: %v", txnID, err)
		}
		var err error
		ir, err = initReq.RequestWith(ctxFor(t, 15*time.Second), admin.Broker(0))
		if err != nil {
			t.Fatalf("InitProducerId for %s: %v", txnID, err)
		}
		retriable := ir.ErrorCode == kerr.NotCoordinator.Code || ir.ErrorCode == kerr.CoordinatorLoadInProgress.Code ||
			ir.ErrorCode == kerr.CoordinatorNotAvailable.Code
		if !retriable || time.Now().After(deadline) {
			break
		}
	}
	if ir.ErrorCode != 0 {
		t.Fatalf("InitProducerId for %s: %v", txnID, kerr.ErrorForCode(ir.ErrorCode))
	}
	pid, epoch := ir.ProducerID, ir.ProducerEpoch

	// allowed's ACLs: exactly what each API needs (Kafka's implications:
	// Read, Write, Delete and Alter imply Describe; AlterConfigs implies
	// DescribeConfigs).
	const who = "User:allowed"
	grant := func(bld *kadm.ACLBuilder, ops ...kadm.ACLOperation) {
		mustCreateACLs(t, adm, bld.Allow(who).AllowHosts("*").Operations(ops...))
	}
	grant(kadm.NewACLs().Topics("mx"), kadm.OpRead, kadm.OpWrite, kadm.OpDescribeConfigs)
	grant(kadm.NewACLs().Topics("mx-rec", "mx-del"), kadm.OpDelete)
	grant(kadm.NewACLs().Topics("mx-alt"), kadm.OpAlter)
	grant(kadm.NewACLs().Topics("mx-cfg"), kadm.OpAlterConfigs)
	grant(kadm.NewACLs().Topics("mx-new"), kadm.OpCreate)
	grant(kadm.NewACLs().Topics("mx-auto"), kadm.OpDescribe, kadm.OpCreate) // Metadata's auto-creation checks both
	grant(kadm.NewACLs().Topics("mx-auto2"), kadm.OpDescribe)
	grant(kadm.NewACLs().Groups("mx-g", "mx-join"), kadm.OpRead)
	grant(kadm.NewACLs().Groups("mx-gdel"), kadm.OpDelete)
	grant(kadm.NewACLs().TransactionalIDs("mx-txn").ResourcePatternType(kadm.ACLPatternPrefixed), kadm.OpWrite)
	grant(kadm.NewACLs().Clusters(), kadm.OpClusterAction, kadm.OpDescribe, kadm.OpAlter, kadm.OpDescribeConfigs, kadm.OpAlterConfigs)

	for _, r := range []*kadm.ACLBuilder{kadm.NewACLs().Topics("*"), kadm.NewACLs().Groups("*"), kadm.NewACLs().TransactionalIDs("*"), kadm.NewACLs().Clusters()} {
		mustCreateACLs(t, adm, r.Allow("User:describer").AllowHosts("*").Operations(kadm.OpDescribe))
	}

	peers := []*matrixPeer{ // allowed last: the others must find the state untouched
		{name: "denied", cl: newClient("denied"), v: map[int16]*kgo.Client{}},
		{name: "describer", cl: newClient("describer"), v: map[int16]*kgo.Client{}},
		{name: "allowed", cl: newClient("allowed"), v: map[int16]*kgo.Client{}},
	}
	pinned := func(p *matrixPeer, key, version int16) *kgo.Client {
		k := key<<8 | version
		if p.v[k] == nil {
			vs := kversion.Stable()
			vs.SetMaxKeyVersion(key, version)
			p.v[k] = newClient(p.name, kgo.MaxVersions(vs))
		}
		return p.v[k]
	}

	for _, row := range matrixRows(t, admin, b, pid, epoch) {
		t.Run(row.name, func(t *testing.T) {
			var before string
			if row.state != nil {
				before = row.state(t)
			}
			for _, p := range peers {
				cl := p.cl
				req := row.req()
				if p.name == "allowed" && row.allowedReq != nil {
					req = row.allowedReq()
				}
				if row.maxVersion > 0 {
					cl = pinned(p, req.Key(), row.maxVersion)
				}
				resp, err := cl.Broker(0).Request(ctxFor(t, 20*time.Second), req)
				if err != nil {
					t.Fatalf("%s as %s: %v", row.name, p.name, err)
				}
				codes := row.codes(resp)
				t.Logf("%s: %v", p.name, codes)
				if len(codes) == 0 {
					t.Fatalf("%s as %s: no error codes in %+v", row.name, p.name, resp)
				}
				want, untouched, sees := row.allowed, false, row.sees
				switch {
				case p.name == "denied":
					want, untouched = row.denied, true
				case p.name == "describer" && row.describeOK:
					want, sees = passes, nil // sees tells allowed from denied
				case p.name == "describer":
					want, untouched = row.denied, true
				}
				switch {
				case want == passes && slices.ContainsFunc(codes, func(c int16) bool { return slices.Contains(authzCodes, c) }):
					t.Errorf("%s as %s: codes %v, want past authorization", row.name, p.name, codes)
				case want != passes && slices.ContainsFunc(codes, func(c int16) bool { return c != want }):
					t.Errorf("%s as %s: codes %v, want all %d (%v)", row.name, p.name, codes, want, kerr.ErrorForCode(want))
				}
				if sees != nil && sees(resp) != (p.name == "allowed") {
					t.Errorf("%s as %s: sees=%v in %+v", row.name, p.name, p.name != "allowed", resp)
				}
				if row.state == nil {
					continue
				}
				after := row.state(t)
				if untouched && after != before {
					t.Errorf("%s as %s changed the state: %s → %s", row.name, p.name, before, after)
				}
				// The metadata cache follows the store asynchronously,
				// with no event a client could await: poll, bounded.
				for deadline := time.Now().Add(10 * time.Second); p.name == "allowed" && row.changes && after == before; {
					if time.Now().After(deadline) {
						t.Errorf("%s as allowed did not change the state (%s)", row.name, after)
						break
					}
					time.Sleep(50 * time.Millisecond)
					after = row.state(t)
				}
				t.Logf("%s state: %s → %s", p.name, before, after)
				before = after
			}
		})
	}
}

// matrixRows is the table, in the order it runs (groups' and the
// transaction's rows build on each other; the inter-broker ones last).
func matrixRows(t *testing.T, admin *kgo.Client, b *harness.Broker, pid int64, epoch int16) []matrixRow {
	adm := kadm.NewClient(admin)
	var (
		topicAuth = kerr.TopicAuthorizationFailed.Code
		groupAuth = kerr.GroupAuthorizationFailed.Code
		clusAuth  = kerr.ClusterAuthorizationFailed.Code
		txnAuth   = kerr.TransactionalIDAuthorizationFailed.Code
		str       = func(s string) *string { return &s }
	)
	endOffset := func(topic string) func(*testing.T) string {
		return func(t *testing.T) string { return listed(t, adm.ListEndOffsets, topic) }
	}
	startOffset := func(topic string) func(*testing.T) string {
		return func(t *testing.T) string { return listed(t, adm.ListStartOffsets, topic) }
	}
	groupOffsets := func(group string) func(*testing.T) string {
		return func(t *testing.T) string {
			res, err := adm.FetchOffsets(ctxFor(t, 10*time.Second), group)
			if err != nil {
				t.Fatalf("FetchOffsets %s: %v", group, err)
			}
			var out []string
			res.Each(func(o kadm.OffsetResponse) { out = append(out, fmt.Sprintf("%s/%d@%d", o.Topic, o.Partition, o.At)) })
			slices.Sort(out)
			return fmt.Sprint(out)
		}
	}
	topics := func(t *testing.T) string { // a raw Metadata: kgo caches its own for 5 s
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctxFor(t, 10*time.Second), admin.Broker(0))
		if err != nil {
			t.Fatalf("Metadata: %v", err)
		}
		var out []string
		for _, mt := range resp.Topics {
			if mt.Topic != nil && !strings.HasPrefix(*mt.Topic, "__") {
				out = append(out, fmt.Sprintf("%s:%d", *mt.Topic, len(mt.Partitions)))
			}
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	clientQuotas := func(t *testing.T) string {
		qs, err := adm.DescribeClientQuotas(ctxFor(t, 10*time.Second), false, nil)
		if err != nil {
			t.Fatalf("DescribeClientQuotas: %v", err)
		}
		var out []string
		for _, q := range qs {
			for _, v := range q.Values {
				out = append(out, fmt.Sprintf("%v %s=%v", q.Entity, v.Key, v.Value))
			}
		}
		sort.Strings(out)
		return strings.Join(out, "; ")
	}
	topicConfig := func(t *testing.T) string {
		rc, err := adm.DescribeTopicConfigs(ctxFor(t, 10*time.Second), "mx-cfg")
		if err != nil {
			t.Fatalf("DescribeTopicConfigs: %v", err)
		}
		c, err := rc.On("mx-cfg", nil)
		if err != nil {
			t.Fatalf("DescribeTopicConfigs: %v", err)
		}
		for _, kv := range c.Configs {
			if kv.Key == "retention.ms" {
				return kv.MaybeValue() + " " + kv.Source.String()
			}
		}
		return "retention.ms missing"
	}
	acls := func(t *testing.T) string {
		res, err := adm.DescribeACLs(ctxFor(t, 10*time.Second), kadm.NewACLs().Topics("mx-acl").ResourcePatternType(kadm.ACLPatternLiteral).
			Allow().Deny().AllowHosts().DenyHosts().Operations(kadm.OpAny))
		if err != nil {
			t.Fatalf("DescribeACLs: %v", err)
		}
		n := 0
		for _, r := range res {
			n += len(r.Described)
		}
		return fmt.Sprint(n, " ACLs on mx-acl")
	}
	scram := func(t *testing.T) string {
		res, err := adm.DescribeUserSCRAMs(ctxFor(t, 10*time.Second))
		if err != nil {
			t.Fatalf("DescribeUserSCRAMs: %v", err)
		}
		_, ok := res["carol"]
		return fmt.Sprint("carol has credentials: ", ok)
	}
	groups := func(t *testing.T) string {
		lg, err := adm.ListGroups(ctxFor(t, 10*time.Second))
		if err != nil {
			t.Fatalf("ListGroups: %v", err)
		}
		return fmt.Sprint(lg.Groups())
	}
	txnState := func(id string) func(*testing.T) string {
		return func(t *testing.T) string {
			res, err := adm.DescribeTransactions(ctxFor(t, 10*time.Second), id)
			if err != nil {
				t.Fatalf("DescribeTransactions: %v", err)
			}
			d := res[id]
			return fmt.Sprintf("%s epoch %d state %s partitions %d", id, d.ProducerEpoch, d.State, len(d.Topics))
		}
	}
	replicaDir := func(t *testing.T) string {
		_, err := os.Stat(filepath.Join(b.DataDir, "mx-0"))
		return fmt.Sprint("mx-0 present: ", err == nil, "; end ", endOffset("mx")(t))
	}

	batch := produceBatch(t)
	sc := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
	sc.Name, sc.Mechanism, sc.Iterations = "carol", 1, 4096
	sc.Salt, sc.SaltedPassword = randomBytes(t, 16), randomBytes(t, 32)

	return []matrixRow{
		// The data path.
		{name: "Produce", denied: topicAuth, allowed: 0, state: endOffset("mx"), changes: true,
			req: func() kmsg.Request { return harness.ProduceRequest("mx", 0, batch, -1, 5*time.Second) },
			codes: func(r kmsg.Response) (c []int16) {
				for _, t := range r.(*kmsg.ProduceResponse).Topics {
					for _, p := range t.Partitions {
						c = append(c, p.ErrorCode)
					}
				}
				return c
			}},
		{name: "Fetch", denied: topicAuth, allowed: 0, req: func() kmsg.Request { return fetchRequest(-1, "mx") }, codes: fetchCodes},
		{name: "ListOffsets", describeOK: true, denied: topicAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrListOffsetsRequest()
				req.ReplicaID = -1
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = "mx"
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Timestamp, rp.CurrentLeaderEpoch = -1, -1
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, t := range r.(*kmsg.ListOffsetsResponse).Topics {
					for _, p := range t.Partitions {
						c = append(c, p.ErrorCode)
					}
				}
				return c
			}},
		{name: "Metadata/explicit topic", describeOK: true, denied: topicAuth, allowed: 0,
			req: func() kmsg.Request { req := metadataFor("mx"); req.AllowAutoTopicCreation = false; return req }, codes: metadataCodes},
		{name: "Metadata/authorized operations", describeOK: true, denied: topicAuth, allowed: 0,
			req: func() kmsg.Request {
				req := metadataFor("mx")
				req.AllowAutoTopicCreation, req.IncludeTopicAuthorizedOperations = false, true
				return req
			},
			codes: metadataCodes,
			sees: func(r kmsg.Response) bool { // Read, Write, DescribeConfigs and the Describe they imply
				t := r.(*kmsg.MetadataResponse).Topics
				return len(t) == 1 && t[0].AuthorizedOperations == opBits(kmsg.ACLOperationRead, kmsg.ACLOperationWrite,
					kmsg.ACLOperationDescribe, kmsg.ACLOperationDescribeConfigs)
			}},
		{name: "Metadata/all topics (filtered)", describeOK: true, denied: 0, allowed: 0,
			req:   func() kmsg.Request { return kmsg.NewPtrMetadataRequest() },
			codes: metadataCodes0,
			// allowed sees mx (Read), mx-rec and mx-del (Delete) and
			// mx-alt (Alter), which imply Describe; not mx-cfg
			// (AlterConfigs does not).
			sees: func(r kmsg.Response) bool {
				var got []string
				for _, t := range r.(*kmsg.MetadataResponse).Topics {
					if t.Topic != nil && strings.HasPrefix(*t.Topic, "mx") {
						got = append(got, *t.Topic)
					}
				}
				slices.Sort(got)
				return slices.Equal(got, []string{"mx", "mx-alt", "mx-del", "mx-rec"})
			}},
		{name: "DescribeTopicPartitions/explicit topic", describeOK: true, denied: topicAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrDescribeTopicPartitionsRequest()
				req.ResponsePartitionLimit = 100
				rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
				rt.Topic = "mx"
				req.Topics = append(req.Topics, rt)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, t := range r.(*kmsg.DescribeTopicPartitionsResponse).Topics {
					c = append(c, t.ErrorCode)
				}
				return c
			}},
		{name: "Metadata/auto-create", denied: topicAuth, allowed: kerr.LeaderNotAvailable.Code, // created now, no leader yet
			state: topics, changes: true,
			req: func() kmsg.Request { return metadataFor("mx-auto") }, codes: metadataCodes},
		// Describe without Create: Kafka still refuses to create, so
		// "allowed" (Describe only on mx-auto2) gets the refusal too.
		{name: "Metadata/auto-create without Create", denied: topicAuth, allowed: topicAuth, state: topics,
			req: func() kmsg.Request { return metadataFor("mx-auto2") }, codes: metadataCodes},
		{name: "OffsetForLeaderEpoch", describeOK: true, denied: topicAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrOffsetForLeaderEpochRequest()
				req.ReplicaID = -1
				rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
				rt.Topic = "mx"
				rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
				rp.CurrentLeaderEpoch, rp.LeaderEpoch = -1, 0
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, t := range r.(*kmsg.OffsetForLeaderEpochResponse).Topics {
					for _, p := range t.Partitions {
						c = append(c, p.ErrorCode)
					}
				}
				return c
			}},
		{name: "DescribeProducers", denied: topicAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrDescribeProducersRequest()
				rt := kmsg.NewDescribeProducersRequestTopic()
				rt.Topic, rt.Partitions = "mx", []int32{0}
				req.Topics = append(req.Topics, rt)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, t := range r.(*kmsg.DescribeProducersResponse).Topics {
					for _, p := range t.Partitions {
						c = append(c, p.ErrorCode)
					}
				}
				return c
			}},
		{name: "DeleteRecords", denied: topicAuth, allowed: 0, state: startOffset("mx-rec"), changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrDeleteRecordsRequest()
				req.TimeoutMillis = 5000
				rt := kmsg.NewDeleteRecordsRequestTopic()
				rt.Topic = "mx-rec"
				rp := kmsg.NewDeleteRecordsRequestTopicPartition()
				rp.Offset = 2
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, t := range r.(*kmsg.DeleteRecordsResponse).Topics {
					for _, p := range t.Partitions {
						c = append(c, p.ErrorCode)
					}
				}
				return c
			}},

		// Groups: mx-g (Read) has a committed offset; mx-join (Read) is
		// joined; mx-gdel (Delete) loses its offsets, then itself.
		{name: "FindCoordinator/group", describeOK: true, denied: groupAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrFindCoordinatorRequest()
				req.CoordinatorKey, req.CoordinatorKeys = "mx-g", []string{"mx-g"}
				return req
			},
			codes: findCoordinatorCodes},
		{name: "FindCoordinator/group v3", describeOK: true, maxVersion: 3, denied: groupAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrFindCoordinatorRequest()
				req.CoordinatorKey = "mx-g"
				return req
			},
			codes: findCoordinatorCodes},
		{name: "OffsetCommit", denied: groupAuth, allowed: 0, state: groupOffsets("mx-g"), changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrOffsetCommitRequest()
				req.Group, req.Generation = "mx-g", -1
				rt := kmsg.NewOffsetCommitRequestTopic()
				rt.Topic = "mx"
				rp := kmsg.NewOffsetCommitRequestTopicPartition()
				rp.Offset, rp.LeaderEpoch = 2, -1
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, t := range r.(*kmsg.OffsetCommitResponse).Topics {
					for _, p := range t.Partitions {
						c = append(c, p.ErrorCode)
					}
				}
				return c
			}},
		{name: "OffsetFetch", describeOK: true, denied: groupAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrOffsetFetchRequest()
				req.Group = "mx-g"
				rg := kmsg.NewOffsetFetchRequestGroup()
				rg.Group = "mx-g"
				rt := kmsg.NewOffsetFetchRequestGroupTopic()
				rt.Topic, rt.Partitions = "mx", []int32{0}
				rg.Topics = append(rg.Topics, rt)
				req.Groups = append(req.Groups, rg)
				rt0 := kmsg.NewOffsetFetchRequestTopic()
				rt0.Topic, rt0.Partitions = "mx", []int32{0}
				req.Topics = append(req.Topics, rt0)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				resp := r.(*kmsg.OffsetFetchResponse)
				if resp.Version < 8 {
					c = append(c, resp.ErrorCode)
				}
				for _, g := range resp.Groups {
					c = append(c, g.ErrorCode)
					for _, t := range g.Topics {
						for _, p := range t.Partitions {
							c = append(c, p.ErrorCode)
						}
					}
				}
				return c
			}},
		{name: "JoinGroup", denied: groupAuth, allowed: kerr.MemberIDRequired.Code,
			req: func() kmsg.Request {
				req := kmsg.NewPtrJoinGroupRequest()
				req.Group, req.ProtocolType, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = "mx-join", "consumer", 10000, 10000
				req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0}}}
				return req
			},
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.JoinGroupResponse).ErrorCode} }},
		{name: "SyncGroup", denied: groupAuth, allowed: kerr.UnknownMemberID.Code,
			req: func() kmsg.Request {
				req := kmsg.NewPtrSyncGroupRequest()
				req.Group, req.Generation, req.MemberID = "mx-join", 1, "nobody"
				req.ProtocolType, req.Protocol = str("consumer"), str("range")
				return req
			},
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.SyncGroupResponse).ErrorCode} }},
		{name: "Heartbeat", denied: groupAuth, allowed: kerr.UnknownMemberID.Code,
			req: func() kmsg.Request {
				req := kmsg.NewPtrHeartbeatRequest()
				req.Group, req.Generation, req.MemberID = "mx-join", 1, "nobody"
				return req
			},
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.HeartbeatResponse).ErrorCode} }},
		{name: "LeaveGroup", denied: groupAuth, allowed: passes,
			req: func() kmsg.Request {
				req := kmsg.NewPtrLeaveGroupRequest()
				req.Group, req.MemberID = "mx-join", "nobody"
				m := kmsg.NewLeaveGroupRequestMember()
				m.MemberID = "nobody"
				req.Members = append(req.Members, m)
				return req
			},
			codes: func(r kmsg.Response) []int16 {
				resp := r.(*kmsg.LeaveGroupResponse)
				c := []int16{resp.ErrorCode}
				for _, m := range resp.Members {
					c = append(c, m.ErrorCode)
				}
				return c
			}},
		{name: "DescribeGroups", describeOK: true, denied: groupAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrDescribeGroupsRequest()
				req.Groups, req.IncludeAuthorizedOperations = []string{"mx-g"}, true
				return req
			},
			sees: func(r kmsg.Response) bool { // Read, and the Describe it implies
				g := r.(*kmsg.DescribeGroupsResponse).Groups
				return len(g) == 1 && g[0].AuthorizedOperations == opBits(kmsg.ACLOperationRead, kmsg.ACLOperationDescribe)
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, g := range r.(*kmsg.DescribeGroupsResponse).Groups {
					c = append(c, g.ErrorCode)
				}
				return c
			}},
		{name: "ListGroups (filtered)", describeOK: true, denied: 0, allowed: 0,
			req:   func() kmsg.Request { return kmsg.NewPtrListGroupsRequest() },
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ListGroupsResponse).ErrorCode} },
			sees: func(r kmsg.Response) bool {
				return slices.ContainsFunc(r.(*kmsg.ListGroupsResponse).Groups, func(g kmsg.ListGroupsResponseGroup) bool { return g.Group == "mx-g" })
			}},
		{name: "OffsetDelete", denied: groupAuth, allowed: 0, state: groupOffsets("mx-gdel"), changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrOffsetDeleteRequest()
				req.Group = "mx-gdel"
				rt := kmsg.NewOffsetDeleteRequestTopic()
				rt.Topic = "mx"
				rp := kmsg.NewOffsetDeleteRequestTopicPartition()
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				resp := r.(*kmsg.OffsetDeleteResponse)
				c = append(c, resp.ErrorCode)
				for _, t := range resp.Topics {
					for _, p := range t.Partitions {
						c = append(c, p.ErrorCode)
					}
				}
				return c
			}},
		{name: "DeleteGroups", denied: groupAuth, allowed: 0, state: groups, changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrDeleteGroupsRequest()
				req.Groups = []string{"mx-gdel"}
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, g := range r.(*kmsg.DeleteGroupsResponse).Groups {
					c = append(c, g.ErrorCode)
				}
				return c
			}},

		// Transactions: mx-txn-1 gets a producer id; mx-txn-2 (admin's
		// producer pid/epoch) adds mx and mx-g's offsets, commits them
		// and commits.
		{name: "InitProducerId/idempotent", denied: clusAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrInitProducerIDRequest()
				req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = 60000, -1, -1
				return req
			},
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.InitProducerIDResponse).ErrorCode} }},
		{name: "InitProducerId/transactional", denied: txnAuth, allowed: 0, state: txnState("mx-txn-1"), changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrInitProducerIDRequest()
				req.TransactionalID, req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = str("mx-txn-1"), 60000, -1, -1
				return req
			},
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.InitProducerIDResponse).ErrorCode} }},
		{name: "FindCoordinator/transaction", describeOK: true, denied: txnAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrFindCoordinatorRequest()
				req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = 1, "mx-txn-2", []string{"mx-txn-2"}
				return req
			},
			codes: findCoordinatorCodes},
		{name: "AddPartitionsToTxn/client v3", maxVersion: 3, denied: txnAuth, allowed: 0, state: txnState("mx-txn-2"), changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrAddPartitionsToTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch = "mx-txn-2", pid, epoch
				rt := kmsg.NewAddPartitionsToTxnRequestTopic()
				rt.Topic, rt.Partitions = "mx", []int32{0}
				req.Topics = append(req.Topics, rt)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, t := range r.(*kmsg.AddPartitionsToTxnResponse).Topics {
					for _, p := range t.Partitions {
						c = append(c, p.ErrorCode)
					}
				}
				return c
			}},
		{name: "AddPartitionsToTxn/broker v4", denied: clusAuth, allowed: 0, // verify only: mx-0 is in the transaction

			req: func() kmsg.Request {
				req := kmsg.NewPtrAddPartitionsToTxnRequest()
				tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
				tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = "mx-txn-2", pid, epoch, true
				tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
				tt.Topic, tt.Partitions = "mx", []int32{0}
				tx.Topics = append(tx.Topics, tt)
				req.Transactions = append(req.Transactions, tx)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				resp := r.(*kmsg.AddPartitionsToTxnResponse)
				c = append(c, resp.ErrorCode)
				for _, tx := range resp.Transactions {
					for _, t := range tx.Topics {
						for _, p := range t.Partitions {
							c = append(c, p.ErrorCode)
						}
					}
				}
				return c
			}},
		{name: "AddOffsetsToTxn", denied: txnAuth, allowed: 0, state: txnState("mx-txn-2"), changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrAddOffsetsToTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = "mx-txn-2", pid, epoch, "mx-g"
				return req
			},
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.AddOffsetsToTxnResponse).ErrorCode} }},
		{name: "TxnOffsetCommit", denied: txnAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrTxnOffsetCommitRequest()
				req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = "mx-txn-2", "mx-g", pid, epoch, -1
				rt := kmsg.NewTxnOffsetCommitRequestTopic()
				rt.Topic = "mx"
				rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
				rp.Offset, rp.LeaderEpoch = 3, -1
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, t := range r.(*kmsg.TxnOffsetCommitResponse).Topics {
					for _, p := range t.Partitions {
						c = append(c, p.ErrorCode)
					}
				}
				return c
			}},
		{name: "DescribeTransactions", describeOK: true, denied: txnAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrDescribeTransactionsRequest()
				req.TransactionalIDs = []string{"mx-txn-2"}
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, s := range r.(*kmsg.DescribeTransactionsResponse).TransactionStates {
					c = append(c, s.ErrorCode)
				}
				return c
			}},
		{name: "ListTransactions (filtered)", describeOK: true, denied: 0, allowed: 0,
			req:   func() kmsg.Request { return kmsg.NewPtrListTransactionsRequest() },
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ListTransactionsResponse).ErrorCode} },
			sees: func(r kmsg.Response) bool {
				return slices.ContainsFunc(r.(*kmsg.ListTransactionsResponse).TransactionStates,
					func(s kmsg.ListTransactionsResponseTransactionState) bool { return s.TransactionalID == "mx-txn-2" })
			}},
		{name: "EndTxn", denied: txnAuth, allowed: 0, state: txnState("mx-txn-2"), changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrEndTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = "mx-txn-2", pid, epoch, true
				return req
			},
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.EndTxnResponse).ErrorCode} }},

		// Topics' administration.
		{name: "CreateTopics", denied: topicAuth, allowed: 0, state: topics, changes: true,
			req: func() kmsg.Request { return createTopic1("mx-new") }, codes: createTopicsCodes,
			// Created, but without DescribeConfigs on mx-new: no configs,
			// counts or id, ConfigErrorCode TOPIC_AUTHORIZATION_FAILED.
			sees: func(r kmsg.Response) bool {
				t := r.(*kmsg.CreateTopicsResponse).Topics
				return len(t) == 1 && t[0].ErrorCode == 0 && t[0].ConfigErrorCode == kerr.TopicAuthorizationFailed.Code &&
					t[0].NumPartitions == -1 && t[0].ReplicationFactor == -1 && len(t[0].Configs) == 0 && t[0].TopicID == [16]byte{}
			}},
		{name: "CreateTopics/existing", denied: topicAuth, allowed: kerr.TopicAlreadyExists.Code, state: topics,
			req: func() kmsg.Request { return createTopic1("mx-new") }, codes: createTopicsCodes,
			// A creation tried and failed resets ConfigErrorCode (KafkaApis).
			sees: func(r kmsg.Response) bool {
				t := r.(*kmsg.CreateTopicsResponse).Topics
				return len(t) == 1 && t[0].ConfigErrorCode == 0
			}},
		{name: "CreatePartitions", denied: topicAuth, allowed: 0, state: topics, changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrCreatePartitionsRequest()
				req.TimeoutMillis = 10000
				rt := kmsg.NewCreatePartitionsRequestTopic()
				rt.Topic, rt.Count = "mx-alt", 2
				req.Topics = append(req.Topics, rt)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, t := range r.(*kmsg.CreatePartitionsResponse).Topics {
					c = append(c, t.ErrorCode)
				}
				return c
			}},
		{name: "DeleteTopics", denied: topicAuth, allowed: 0, state: topics, changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrDeleteTopicsRequest()
				req.TimeoutMillis = 10000
				req.TopicNames = []string{"mx-del"}
				dt := kmsg.NewDeleteTopicsRequestTopic()
				dt.Topic = str("mx-del")
				req.Topics = append(req.Topics, dt)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, t := range r.(*kmsg.DeleteTopicsResponse).Topics {
					c = append(c, t.ErrorCode)
				}
				return c
			}},

		// Configs: topic (DescribeConfigs on mx, AlterConfigs on mx-cfg)
		// and broker (the cluster's DescribeConfigs / AlterConfigs;
		// broker alters validate only).
		{name: "DescribeConfigs/topic", denied: topicAuth, allowed: 0,
			req: func() kmsg.Request { return describeConfigs(kmsg.ConfigResourceTypeTopic, "mx") }, codes: describeConfigsCodes},
		{name: "DescribeConfigs/broker", denied: clusAuth, allowed: 0,
			req: func() kmsg.Request { return describeConfigs(kmsg.ConfigResourceTypeBroker, "0") }, codes: describeConfigsCodes},
		{name: "AlterConfigs/topic", denied: topicAuth, allowed: 0, state: topicConfig, changes: true,
			req: func() kmsg.Request {
				return alterConfigs(kmsg.ConfigResourceTypeTopic, "mx-cfg", "retention.ms", "3600000", false)
			},
			codes: alterConfigsCodes},
		// Dynamic broker configs: ALTER_CONFIGS on the cluster, then
		// validated (validate_only: nothing written).
		{name: "AlterConfigs/broker", denied: clusAuth, allowed: 0,
			req: func() kmsg.Request {
				return alterConfigs(kmsg.ConfigResourceTypeBroker, "0", "log.retention.ms", "60000", true)
			},
			codes: alterConfigsCodes},
		{name: "IncrementalAlterConfigs/topic", denied: topicAuth, allowed: 0, state: topicConfig, changes: true,
			req: func() kmsg.Request {
				return incrementalAlterConfigs(kmsg.ConfigResourceTypeTopic, "mx-cfg", "retention.ms", "7200000", false)
			},
			codes: incrementalAlterConfigsCodes},
		{name: "IncrementalAlterConfigs/broker", denied: clusAuth, allowed: 0,
			req: func() kmsg.Request {
				return incrementalAlterConfigs(kmsg.ConfigResourceTypeBroker, "0", "log.retention.ms", "60000", true)
			},
			codes: incrementalAlterConfigsCodes},
		// Client quotas: DESCRIBE_CONFIGS / ALTER_CONFIGS on the cluster
		// (ZkAdminManager); AlterClientQuotas answers per entry.
		{name: "DescribeClientQuotas", denied: clusAuth, allowed: 0,
			req:   func() kmsg.Request { return kmsg.NewPtrDescribeClientQuotasRequest() },
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DescribeClientQuotasResponse).ErrorCode} }},
		{name: "AlterClientQuotas", denied: clusAuth, allowed: 0, state: clientQuotas, changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrAlterClientQuotasRequest()
				for _, name := range []*string{kmsg.StringPtr("mx-q"), nil} {
					en := kmsg.NewAlterClientQuotasRequestEntry()
					e := kmsg.NewAlterClientQuotasRequestEntryEntity()
					e.Type, e.Name = "client-id", name
					op := kmsg.NewAlterClientQuotasRequestEntryOp()
					op.Key, op.Value = "request_percentage", 1e6 // never throttles the rows after
					en.Entity, en.Ops = append(en.Entity, e), append(en.Ops, op)
					req.Entries = append(req.Entries, en)
				}
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, e := range r.(*kmsg.AlterClientQuotasResponse).Entries {
					c = append(c, e.ErrorCode)
				}
				return c
			}},

		// The cluster's administration.
		{name: "DescribeCluster (authorized operations)", describeOK: true, denied: 0, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrDescribeClusterRequest()
				req.IncludeClusterAuthorizedOperations = true
				return req
			},
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DescribeClusterResponse).ErrorCode} },
			// denied: 0 (no cluster Describe); allowed: its five grants.
			sees: func(r kmsg.Response) bool {
				return r.(*kmsg.DescribeClusterResponse).ClusterAuthorizedOperations == opBits(kmsg.ACLOperationAlter,
					kmsg.ACLOperationDescribe, kmsg.ACLOperationClusterAction, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs)
			}},
		{name: "CreateAcls", denied: clusAuth, allowed: 0, state: acls, changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrCreateACLsRequest()
				c := kmsg.NewCreateACLsRequestCreation()
				c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "mx-acl", kmsg.ACLResourcePatternTypeLiteral
				c.Principal, c.Host, c.Operation, c.PermissionType = "User:carol", "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
				req.Creations = append(req.Creations, c)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, x := range r.(*kmsg.CreateACLsResponse).Results {
					c = append(c, x.ErrorCode)
				}
				return c
			}},
		{name: "DescribeAcls", describeOK: true, denied: clusAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrDescribeACLsRequest()
				req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
				req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
				return req
			},
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.DescribeACLsResponse).ErrorCode} }},
		{name: "DeleteAcls", denied: clusAuth, allowed: 0, state: acls, changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrDeleteACLsRequest()
				f := kmsg.NewDeleteACLsRequestFilter()
				f.ResourceType, f.ResourceName, f.ResourcePatternType = kmsg.ACLResourceTypeTopic, str("mx-acl"), kmsg.ACLResourcePatternTypeLiteral
				f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
				req.Filters = append(req.Filters, f)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, x := range r.(*kmsg.DeleteACLsResponse).Results {
					c = append(c, x.ErrorCode)
				}
				return c
			}},
		{name: "ElectLeaders", denied: clusAuth, allowed: kerr.ElectionNotNeeded.Code,
			req: func() kmsg.Request {
				req := kmsg.NewPtrElectLeadersRequest()
				req.TimeoutMillis = 10000
				rt := kmsg.NewElectLeadersRequestTopic()
				rt.Topic, rt.Partitions = "mx", []int32{0}
				req.Topics = append(req.Topics, rt)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				resp := r.(*kmsg.ElectLeadersResponse)
				if resp.ErrorCode != 0 {
					c = append(c, resp.ErrorCode)
				}
				for _, t := range resp.Topics {
					for _, p := range t.Partitions {
						c = append(c, p.ErrorCode)
					}
				}
				return c
			}},
		{name: "AlterPartitionReassignments", denied: clusAuth, allowed: kerr.NoReassignmentInProgress.Code,
			req: func() kmsg.Request {
				req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
				req.TimeoutMillis = 10000
				rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
				rt.Topic = "mx"
				rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition() // nil replicas: cancel
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				resp := r.(*kmsg.AlterPartitionAssignmentsResponse)
				if resp.ErrorCode != 0 || len(resp.Topics) == 0 {
					c = append(c, resp.ErrorCode)
				}
				for _, t := range resp.Topics {
					for _, p := range t.Partitions {
						c = append(c, p.ErrorCode)
					}
				}
				return c
			}},
		{name: "ListPartitionReassignments", describeOK: true, denied: clusAuth, allowed: 0,
			req:   func() kmsg.Request { return kmsg.NewPtrListPartitionReassignmentsRequest() },
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ListPartitionReassignmentsResponse).ErrorCode} }},
		// DescribeLogDirs: cluster Describe; the allowed principal sees the
		// broker's one log dir, online.
		{name: "DescribeLogDirs", describeOK: true, denied: clusAuth, allowed: 0,
			req: func() kmsg.Request { return kmsg.NewPtrDescribeLogDirsRequest() },
			codes: func(r kmsg.Response) []int16 {
				resp := r.(*kmsg.DescribeLogDirsResponse)
				c := []int16{resp.ErrorCode}
				for _, d := range resp.Dirs {
					c = append(c, d.ErrorCode)
				}
				return c
			},
			sees: func(r kmsg.Response) bool {
				d := r.(*kmsg.DescribeLogDirsResponse).Dirs
				return len(d) == 1 && d[0].TotalBytes > 0
			}},
		{name: "AlterUserScramCredentials", denied: clusAuth, allowed: 0, state: scram, changes: true,
			req: func() kmsg.Request {
				req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
				req.Upsertions = append(req.Upsertions, sc)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, x := range r.(*kmsg.AlterUserSCRAMCredentialsResponse).Results {
					c = append(c, x.ErrorCode)
				}
				return c
			}},
		{name: "DescribeUserScramCredentials", describeOK: true, denied: clusAuth, allowed: 0,
			req: func() kmsg.Request {
				req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
				u := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
				u.Name = "carol"
				req.Users = append(req.Users, u)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				resp := r.(*kmsg.DescribeUserSCRAMCredentialsResponse)
				c = append(c, resp.ErrorCode)
				for _, x := range resp.Results {
					c = append(c, x.ErrorCode)
				}
				return c
			}},

		// Inter-broker: ClusterAction. allowed's requests are harmless
		// (no partitions, a topic that does not exist, an old controller
		// epoch, a broker that does not exist) and answered as Kafka does.
		{name: "Fetch/follower", denied: topicAuth, allowed: kerr.NotLeaderForPartition.Code, // NOT_LEADER_OR_FOLLOWER: replica 1 is not a replica of mx-0

			req: func() kmsg.Request { return fetchRequest(1, "mx") }, codes: fetchCodes},
		{name: "WriteTxnMarkers", denied: clusAuth, allowed: kerr.UnknownTopicOrPartition.Code, state: endOffset("mx"),
			req: func() kmsg.Request {
				req := kmsg.NewPtrWriteTxnMarkersRequest()
				m := kmsg.NewWriteTxnMarkersRequestMarker()
				m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = pid, epoch, true, 0
				mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
				mt.Topic, mt.Partitions = "mx-none", []int32{0}
				m.Topics = append(m.Topics, mt)
				req.Markers = append(req.Markers, m)
				return req
			},
			codes: func(r kmsg.Response) (c []int16) {
				for _, m := range r.(*kmsg.WriteTxnMarkersResponse).Markers {
					for _, t := range m.Topics {
						for _, p := range t.Partitions {
							c = append(c, p.ErrorCode)
						}
					}
				}
				return c
			}},
		{name: "LeaderAndIsr", denied: clusAuth, allowed: kerr.StaleControllerEpoch.Code,
			req: func() kmsg.Request {
				req := kmsg.NewPtrLeaderAndISRRequest()
				req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 0, 0, -1
				return req
			},
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.LeaderAndISRResponse).ErrorCode} }},
		{name: "UpdateMetadata", denied: clusAuth, allowed: kerr.StaleControllerEpoch.Code,
			req: func() kmsg.Request {
				req := kmsg.NewPtrUpdateMetadataRequest()
				req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 0, 0, -1
				return req
			},
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.UpdateMetadataResponse).ErrorCode} }},
		{name: "ControlledShutdown", denied: clusAuth, allowed: kerr.BrokerNotAvailable.Code,
			req: func() kmsg.Request {
				req := kmsg.NewPtrControlledShutdownRequest()
				req.BrokerID, req.BrokerEpoch = 4242, -1
				return req
			},
			codes: func(r kmsg.Response) []int16 { return []int16{r.(*kmsg.ControlledShutdownResponse).ErrorCode} }},
		// denied's StopReplica would delete mx; allowed's names a topic
		// that does not exist, from an old controller epoch.
		{name: "StopReplica", denied: clusAuth, allowed: kerr.StaleControllerEpoch.Code, state: replicaDir,
			req:        func() kmsg.Request { return stopReplica("mx", 1<<30) },
			allowedReq: func() kmsg.Request { return stopReplica("mx-none", 0) }, codes: stopReplicaCodes},
	}
}

func listed(t *testing.T, list func(context.Context, ...string) (kadm.ListedOffsets, error), topic string) string {
	t.Helper()
	lo, err := list(ctxFor(t, 10*time.Second), topic)
	if err == nil {
		err = lo.Error()
	}
	if err != nil {
		t.Fatalf("list offsets of %s: %v", topic, err)
	}
	o, _ := lo.Lookup(topic, 0)
	return fmt.Sprintf("%s/0@%d", topic, o.Offset)
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func produceBatch(t *testing.T) []byte {
	t.Helper()
	batch, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli()},
		[]record.BatchRecord{{Value: []byte("matrix")}})
	if err != nil {
		t.Fatal(err)
	}
	return batch
}

// fetchRequest reads topic's partition 0 from offset 0 as a consumer
// (replica -1) or as follower replica.
func fetchRequest(replica int32, topic string) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.SessionEpoch = replica, 0, 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = 0, 1<<20, -1, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func fetchCodes(r kmsg.Response) (c []int16) {
	resp := r.(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 {
		c = append(c, resp.ErrorCode)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			c = append(c, p.ErrorCode)
		}
	}
	return c
}

// metadataFor asks for topic's metadata, creating it if it is absent.
func metadataFor(topic string) *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = true
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = &topic
	req.Topics = append(req.Topics, mt)
	return req
}

// createTopic1 asks to create topic with one partition and replica.
func createTopic1(topic string) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
	req.Topics = append(req.Topics, rt)
	return req
}

func createTopicsCodes(r kmsg.Response) (c []int16) {
	for _, t := range r.(*kmsg.CreateTopicsResponse).Topics {
		c = append(c, t.ErrorCode)
	}
	return c
}

// opBits is Kafka's authorized-operations bitfield of ops.
func opBits(ops ...kmsg.ACLOperation) int32 {
	var bits int32
	for _, op := range ops {
		bits |= 1 << int32(op)
	}
	return bits
}

func metadataCodes(r kmsg.Response) (c []int16) {
	for _, t := range r.(*kmsg.MetadataResponse).Topics {
		c = append(c, t.ErrorCode)
	}
	return c
}

// metadataCodes0 is a full listing's codes: 0 for the answer itself
// (an empty listing has no topic codes), then each topic's.
func metadataCodes0(r kmsg.Response) []int16 { return append([]int16{0}, metadataCodes(r)...) }

func findCoordinatorCodes(r kmsg.Response) []int16 {
	resp := r.(*kmsg.FindCoordinatorResponse)
	if resp.Version < 4 {
		return []int16{resp.ErrorCode}
	}
	var c []int16
	for _, x := range resp.Coordinators {
		c = append(c, x.ErrorCode)
	}
	return c
}

func describeConfigs(t kmsg.ConfigResourceType, name string) *kmsg.DescribeConfigsRequest {
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = t, name
	req.Resources = append(req.Resources, r)
	return req
}

func describeConfigsCodes(r kmsg.Response) (c []int16) {
	for _, x := range r.(*kmsg.DescribeConfigsResponse).Resources {
		c = append(c, x.ErrorCode)
	}
	return c
}

func alterConfigs(t kmsg.ConfigResourceType, name, key, value string, validateOnly bool) *kmsg.AlterConfigsRequest {
	req := kmsg.NewPtrAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	r := kmsg.NewAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = t, name
	c := kmsg.NewAlterConfigsRequestResourceConfig()
	c.Name, c.Value = key, &value
	r.Configs = append(r.Configs, c)
	req.Resources = append(req.Resources, r)
	return req
}

func alterConfigsCodes(r kmsg.Response) (c []int16) {
	for _, x := range r.(*kmsg.AlterConfigsResponse).Resources {
		c = append(c, x.ErrorCode)
	}
	return c
}

func incrementalAlterConfigs(t kmsg.ConfigResourceType, name, key, value string, validateOnly bool) *kmsg.IncrementalAlterConfigsRequest {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.ValidateOnly = validateOnly
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = t, name
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value, c.Op = key, &value, kmsg.IncrementalAlterConfigOpSet
	r.Configs = append(r.Configs, c)
	req.Resources = append(req.Resources, r)
	return req
}

func incrementalAlterConfigsCodes(r kmsg.Response) (c []int16) {
	for _, x := range r.(*kmsg.IncrementalAlterConfigsResponse).Resources {
		c = append(c, x.ErrorCode)
	}
	return c
}

// stopReplica asks to stop and delete topic's partition 0, as a
// controller of controllerEpoch would.
func stopReplica(topic string, controllerEpoch int32) *kmsg.StopReplicaRequest {
	req := kmsg.NewPtrStopReplicaRequest()
	req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 0, controllerEpoch, 1<<40
	st := kmsg.NewStopReplicaRequestTopic()
	st.Topic = topic
	ps := kmsg.NewStopReplicaRequestTopicPartitionState()
	ps.Partition, ps.LeaderEpoch, ps.Delete = 0, 1<<30, true
	st.PartitionStates = append(st.PartitionStates, ps)
	st.Partitions = []int32{0}
	req.Topics = append(req.Topics, st)
	req.DeletePartitions = true
	return req
}

func stopReplicaCodes(r kmsg.Response) []int16 {
	resp := r.(*kmsg.StopReplicaResponse)
	c := []int16{resp.ErrorCode}
	for _, p := range resp.Partitions {
		c = append(c, p.ErrorCode)
	}
	return c
}
