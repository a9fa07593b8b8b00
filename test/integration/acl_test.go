package integration

// The authorizer against a real broker process (single node, embedded
// store). Over PLAINTEXT every client is User:ANONYMOUS, so the tests
// tell clients apart by host: 127.0.0.1 and 127.0.0.2 (both loopback on
// Linux; the second bound as the client's source address). aclPeer takes
// the client options, so principals from TLS or SASL slot in unchanged.

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/record"
	"gregor/test/harness"
)

const aclAuthorizer = "kafka.security.authorizer.AclAuthorizer"

// aclPeer is one client identity: its name in messages and the kgo
// options that make it (source address today; SASL/TLS options later).
type aclPeer struct {
	name string
	opts []kgo.Opt
}

// anonymousFrom is User:ANONYMOUS connecting from source address ip.
func anonymousFrom(ip string) aclPeer {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return aclPeer{name: "User:ANONYMOUS@" + ip, opts: []kgo.Opt{kgo.Dialer(d.DialContext)}}
}

// client is a franz-go client of b as p (closed at test end).
func (p aclPeer) client(b *harness.Broker, extra ...kgo.Opt) *kgo.Client {
	return b.Client(append(append([]kgo.Opt{kgo.RequestRetries(2), kgo.RetryTimeout(5 * time.Second)}, p.opts...), extra...)...)
}

func (p aclPeer) admin(b *harness.Broker) *kadm.Client { return kadm.NewClient(p.client(b)) }

// needSecondLoopback skips when 127.0.0.2 cannot be a source address.
func needSecondLoopback(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("127.0.0.2 is not usable here: %v", err)
	}
	l.Close()
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func mustCreateACLs(t *testing.T, adm *kadm.Client, b *kadm.ACLBuilder) {
	t.Helper()
	res, err := adm.CreateACLs(ctxFor(t, 10*time.Second), b)
	if err != nil {
		t.Fatalf("CreateACLs: %v", err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("CreateACLs %s %s %v: %v (%s)", r.Principal, r.Name, r.Operation, r.Err, r.ErrMessage)
		}
	}
}

// produceErr produces one record to topic as p and returns the error.
func produceErr(t *testing.T, b *harness.Broker, p aclPeer, topic string) error {
	t.Helper()
	cl := p.client(b, kgo.DefaultProduceTopic(topic), kgo.RecordRetries(1), kgo.ProduceRequestTimeout(5*time.Second))
	return cl.ProduceSync(ctxFor(t, 15*time.Second), kgo.StringRecord("from "+p.name)).FirstErr()
}

// fetchErr reads topic's partition 0 from the start as p: the first
// error, or nil once a record arrived.
func fetchErr(t *testing.T, b *harness.Broker, p aclPeer, topic string) error {
	t.Helper()
	cl := p.client(b, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}),
		kgo.FetchMaxWait(200*time.Millisecond))
	ctx := ctxFor(t, 15*time.Second)
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if len(fs.Records()) > 0 {
			return nil
		}
	}
	return ctx.Err()
}

func listTopics(t *testing.T, adm *kadm.Client) []string {
	t.Helper()
	td, err := adm.ListTopics(ctxFor(t, 10*time.Second))
	if err != nil {
		t.Fatalf("ListTopics: %v", err)
	}
	return td.Names()
}

// TestACLByHost: ACLs created through CreateAcls allow 127.0.0.1 and
// refuse 127.0.0.2 (topic Read/Write, group Read, cluster actions), a
// Deny Describe hides a topic from full listings, a forged StopReplica
// deletes nothing, and DeleteAcls opens the topic again
// (allow.everyone.if.no.acl.found=true: a resource without ACLs is open).
func TestACLByHost(t *testing.T) {
	needSecondLoopback(t)
	b := harness.StartBroker(t, map[string]string{
		"authorizer.class.name":          aclAuthorizer,
		"allow.everyone.if.no.acl.found": "true",
	})
	local, other := anonymousFrom("127.0.0.1"), anonymousFrom("127.0.0.2")
	for _, topic := range []string{"orders", "secret", "open", "readonly"} {
		createTopic(t, b, topic, 1, nil)
	}
	if err := produceErr(t, b, other, "orders"); err != nil { // no ACLs yet: open to all
		t.Fatalf("produce before any ACL: %v", err)
	}
	adm := local.admin(b)
	const anon = "User:ANONYMOUS"
	mustCreateACLs(t, adm, kadm.NewACLs().Clusters().Allow(anon).AllowHosts("127.0.0.1").Operations(kadm.OpAll))
	mustCreateACLs(t, adm, kadm.NewACLs().Topics("orders").Allow(anon).AllowHosts("127.0.0.1").Operations(kadm.OpRead, kadm.OpWrite))
	mustCreateACLs(t, adm, kadm.NewACLs().Topics("secret").Deny("User:*").DenyHosts("*").Operations(kadm.OpDescribe))
	mustCreateACLs(t, adm, kadm.NewACLs().Topics("readonly").Allow(anon).AllowHosts("127.0.0.1").Operations(kadm.OpRead))
	mustCreateACLs(t, adm, kadm.NewACLs().Groups("g-ok").Allow(anon).AllowHosts("127.0.0.1").Operations(kadm.OpRead))

	described, err := adm.DescribeACLs(ctxFor(t, 10*time.Second), kadm.NewACLs().AnyResource().
		ResourcePatternType(kadm.ACLPatternAny).Allow().Deny().AllowHosts().DenyHosts().Operations(kadm.OpAny))
	if err != nil {
		t.Fatalf("DescribeACLs: %v", err)
	}
	n := 0
	for _, d := range described {
		if d.Err != nil {
			t.Fatalf("DescribeACLs: %v", d.Err)
		}
		n += len(d.Described)
	}
	if n != 6 {
		t.Fatalf("DescribeACLs found %d ACLs, want 6: %+v", n, described)
	}

	t.Run("topic", func(t *testing.T) {
		if err := produceErr(t, b, local, "orders"); err != nil {
			t.Errorf("%s Write orders: %v", local.name, err)
		}
		if err := fetchErr(t, b, local, "orders"); err != nil {
			t.Errorf("%s Read orders: %v", local.name, err)
		}
		if err := produceErr(t, b, other, "orders"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Errorf("%s Write orders = %v, want TOPIC_AUTHORIZATION_FAILED", other.name, err)
		}
		if err := fetchErr(t, b, other, "orders"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Errorf("%s Read orders = %v, want TOPIC_AUTHORIZATION_FAILED", other.name, err)
		}
		// A raw Produce names the partition's error without the client's metadata step.
		batch, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli()},
			[]record.BatchRecord{{Value: []byte("raw")}})
		if err != nil {
			t.Fatal(err)
		}
		req := harness.ProduceRequest("orders", 0, batch, 1, 5*time.Second)
		resp, err := req.RequestWith(ctxFor(t, 10*time.Second), other.client(b).Broker(0))
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Topics[0].Partitions[0].ErrorCode; got != kerr.TopicAuthorizationFailed.Code {
			t.Errorf("raw Produce from %s: error %d, want %d", other.name, got, kerr.TopicAuthorizationFailed.Code)
		}
	})

	t.Run("group", func(t *testing.T) {
		offs := kadm.Offsets{}
		offs.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 1, LeaderEpoch: -1})
		res, err := adm.CommitOffsets(ctxFor(t, 10*time.Second), "g-ok", offs)
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			t.Errorf("%s commit to g-ok: %v", local.name, err)
		}
		// From the other host: FindCoordinator needs group Describe,
		// OffsetCommit group Read (asked of the broker directly).
		find := kmsg.NewPtrFindCoordinatorRequest()
		find.CoordinatorKey, find.CoordinatorKeys = "g-ok", []string{"g-ok"}
		fr, err := find.RequestWith(ctxFor(t, 10*time.Second), other.client(b).Broker(0))
		if err != nil {
			t.Fatal(err)
		}
		if len(fr.Coordinators) != 1 || fr.Coordinators[0].ErrorCode != kerr.GroupAuthorizationFailed.Code {
			t.Errorf("FindCoordinator from %s: %+v, want GROUP_AUTHORIZATION_FAILED", other.name, fr)
		}
		commit := kmsg.NewPtrOffsetCommitRequest()
		commit.Group, commit.Generation = "g-ok", -1
		ct := kmsg.NewOffsetCommitRequestTopic()
		ct.Topic = "orders"
		cp := kmsg.NewOffsetCommitRequestTopicPartition()
		cp.Offset = 1
		ct.Partitions = append(ct.Partitions, cp)
		commit.Topics = append(commit.Topics, ct)
		cr, err := commit.RequestWith(ctxFor(t, 10*time.Second), other.client(b).Broker(0))
		if err != nil {
			t.Fatal(err)
		}
		if got := cr.Topics[0].Partitions[0].ErrorCode; got != kerr.GroupAuthorizationFailed.Code {
			t.Errorf("OffsetCommit from %s: error %d, want GROUP_AUTHORIZATION_FAILED", other.name, got)
		}
		// Joining: JoinGroup itself needs group Read.
		join := kmsg.NewPtrJoinGroupRequest()
		join.Group, join.ProtocolType, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis = "g-ok", "consumer", 10000, 10000
		join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0}}}
		jr, err := join.RequestWith(ctxFor(t, 10*time.Second), other.client(b).Broker(0))
		if err != nil {
			t.Fatal(err)
		}
		if jr.ErrorCode != kerr.GroupAuthorizationFailed.Code {
			t.Errorf("JoinGroup from %s: error %d, want GROUP_AUTHORIZATION_FAILED", other.name, jr.ErrorCode)
		}
	})

	t.Run("metadata", func(t *testing.T) {
		if got := listTopics(t, adm); !slices.Equal(got, []string{"open", "orders", "readonly"}) {
			t.Errorf("%s lists %v, want [open orders readonly] (secret hidden)", local.name, got)
		}
		if got := listTopics(t, other.admin(b)); !slices.Equal(got, []string{"open"}) {
			t.Errorf("%s lists %v, want [open]", other.name, got)
		}
		if _, err := exec.LookPath("kcat"); err == nil {
			out := run(t, time.Minute, "", "kcat", "-L", "-b", b.Addr())
			if !strings.Contains(out, `topic "orders"`) || strings.Contains(out, `topic "secret"`) {
				t.Errorf("kcat -L shows the wrong topics:\n%s", out)
			}
			// librdkafka reports the denied write with Kafka's message.
			msg := kcatFails(t, "hello\n", "kcat", "-P", "-b", b.Addr(), "-t", "readonly")
			if !strings.Contains(msg, "Topic authorization failed") {
				t.Errorf("kcat producing to readonly: %q, want Topic authorization failed", msg)
			}
		}
	})

	t.Run("forged StopReplica", func(t *testing.T) {
		req := kmsg.NewPtrStopReplicaRequest()
		req.Version = 3
		req.ControllerID, req.ControllerEpoch, req.BrokerEpoch = 0, 1<<30, 1<<40
		st := kmsg.NewStopReplicaRequestTopic()
		st.Topic = "orders"
		ps := kmsg.NewStopReplicaRequestTopicPartitionState()
		ps.Partition, ps.LeaderEpoch, ps.Delete = 0, 1<<30, true
		st.PartitionStates = append(st.PartitionStates, ps)
		req.Topics = append(req.Topics, st)
		resp, err := req.RequestWith(ctxFor(t, 10*time.Second), other.client(b).Broker(0))
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(resp.Partitions) != 1 ||
			resp.Partitions[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
			t.Fatalf("StopReplica from %s: %+v, want CLUSTER_AUTHORIZATION_FAILED", other.name, resp)
		}
		if _, err := os.Stat(filepath.Join(b.DataDir, "orders-0")); err != nil {
			t.Errorf("orders-0 after a refused StopReplica: %v", err)
		}
		if err := fetchErr(t, b, local, "orders"); err != nil {
			t.Errorf("orders unreadable after a refused StopReplica: %v", err)
		}
	})

	t.Run("DeleteAcls", func(t *testing.T) {
		res, err := adm.DeleteACLs(ctxFor(t, 10*time.Second), kadm.NewACLs().Topics("orders").
			ResourcePatternType(kadm.ACLPatternLiteral).Allow().AllowHosts().Operations(kadm.OpAny))
		if err != nil {
			t.Fatal(err)
		}
		deleted := 0
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			deleted += len(r.Deleted)
		}
		if deleted != 2 {
			t.Fatalf("DeleteACLs deleted %d, want the 2 orders ACLs", deleted)
		}
		if err := produceErr(t, b, other, "orders"); err != nil { // no ACLs left on orders: open again
			t.Errorf("%s Write orders after DeleteAcls: %v", other.name, err)
		}
	})

	t.Run("kafka-python", func(t *testing.T) {
		py := "/usr/bin/python3"
		harness.NeedTool(t, exec.Command(py, "-c", "import kafka").Run() == nil, "kafka-python (python3-kafka)")
		script := `
import sys
from kafka import KafkaProducer
from kafka.errors import TopicAuthorizationFailedError
p = KafkaProducer(bootstrap_servers=sys.argv[1], retries=0, max_block_ms=10000)
try:
    p.send('readonly', b'x').get(timeout=15)
    print('sent')
except TopicAuthorizationFailedError as e:
    print('denied', type(e).__name__)
`
		f := filepath.Join(t.TempDir(), "denied.py")
		if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		if out := strings.TrimSpace(run(t, time.Minute, "", py, f, b.Addr())); out != "denied TopicAuthorizationFailedError" {
			t.Errorf("kafka-python producing to readonly said %q", out)
		}
	})
}

// kcatFails runs a kcat command that must fail and returns its stderr.
func kcatFails(t *testing.T, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var errb strings.Builder
	cmd.Stderr = &errb
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("%s %v succeeded, want a failure; stderr:\n%s", name, args, errb.String())
		}
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s %v: timed out", name, args)
	}
	return errb.String()
}

// TestACLDenyByDefault: with the authorizer on, no super users and
// allow.everyone.if.no.acl.found=false (the default), nothing without an
// ACL is allowed: CreateTopics answers TOPIC_AUTHORIZATION_FAILED,
// DescribeAcls CLUSTER_AUTHORIZATION_FAILED; super.users=User:ANONYMOUS
// lets the same client do everything.
func TestACLDenyByDefault(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"authorizer.class.name": aclAuthorizer})
	adm := anonymousFrom("127.0.0.1").admin(b)
	res, err := adm.CreateTopic(ctxFor(t, 10*time.Second), 1, 1, nil, "nope")
	if err == nil {
		err = res.Err
	}
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("CreateTopic without ACLs = %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	dr, err := adm.DescribeACLs(ctxFor(t, 10*time.Second), kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).
		Allow().Deny().AllowHosts().DenyHosts().Operations(kadm.OpAny))
	if err == nil && len(dr) > 0 {
		err = dr[0].Err
	}
	if !errors.Is(err, kerr.ClusterAuthorizationFailed) {
		t.Errorf("DescribeACLs without ACLs = %v, want CLUSTER_AUTHORIZATION_FAILED", err)
	}

	b.Props["super.users"] = "User:ANONYMOUS"
	b.Stop()
	b.Start()
	local := anonymousFrom("127.0.0.1")
	createTopic(t, b, "su", 1, nil)
	if err := produceErr(t, b, local, "su"); err != nil {
		t.Fatalf("super user produce: %v", err)
	}
	if err := fetchErr(t, b, local, "su"); err != nil {
		t.Fatalf("super user fetch: %v", err)
	}
	mustCreateACLs(t, local.admin(b), kadm.NewACLs().Topics("su").Deny("User:ANONYMOUS").DenyHosts("*").Operations(kadm.OpWrite))
	if err := produceErr(t, b, local, "su"); err != nil {
		t.Errorf("a Deny ACL stopped a super user: %v", err)
	}
}
