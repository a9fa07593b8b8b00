package consoleconsumer

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gregor/cmd/internal/clientutil/clienttest"
	"gregor/replication/metastore"
	"gregor/replication/zkstore"
)

// zkGet reads a znode's data ("" when missing).
func zkGet(t *testing.T, s metastore.Store, p string) string {
	t.Helper()
	data, _, err := s.Get(p)
	if err != nil {
		return ""
	}
	return string(data)
}

// TestOldConsumerOffsetsInZooKeeper: the seeds' `--zookeeper … --group
// group1 --from-beginning` records its progress at
// /consumers/group1/offsets/t/0 (a decimal string), the next run resumes
// there without re-reading, --from-beginning with stored offsets is
// refused as Kafka's old ConsoleConsumer did, and --delete-consumer-offsets
// starts over.
func TestOldConsumerOffsetsInZooKeeper(t *testing.T) {
	addr := setupCluster(t, 1, rec(0, "", "a"), rec(0, "", "b"), rec(0, "", "c"), rec(0, "", "d"), rec(0, "", "e"))
	connect := clienttest.ZooKeeperWithBroker(t, addr)
	zk, err := zkstore.Open(connect, zkstore.Config{SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer zk.Close()

	code, out, errs := runTool(t, Options{ZooKeeper: connect, Topic: "t", Group: "group1", FromBeginning: true, MaxMessages: 3})
	if code != 0 || out != "a\nb\nc\n" || errs != "Processed a total of 3 messages\n" {
		t.Fatalf("first run: %d %q %q", code, out, errs)
	}
	if got := zkGet(t, zk, "/consumers/group1/offsets/t/0"); got != "3" {
		t.Fatalf("offset znode after 3 records: %q", got)
	}
	// The registrations were ephemeral: gone with the consumer's session.
	if ids, err := zk.Children("/consumers/group1/ids"); err != nil || len(ids) != 0 {
		t.Fatalf("ids after exit: %v %v", ids, err)
	}
	if ok, _ := zk.Exists("/consumers/group1/owners/t/0"); ok {
		t.Fatal("owner znode left after exit")
	}

	code, out, errs = runTool(t, Options{ZooKeeper: connect, Topic: "t", Group: "group1", MaxMessages: 2})
	if code != 0 || out != "d\ne\n" {
		t.Fatalf("resumed run: %d %q %q", code, out, errs)
	}
	if got := zkGet(t, zk, "/consumers/group1/offsets/t/0"); got != "5" {
		t.Fatalf("offset znode after resuming: %q", got)
	}

	code, out, errs = runTool(t, Options{ZooKeeper: connect, Topic: "t", Group: "group1", FromBeginning: true, MaxMessages: 1})
	if code != 1 || out != "" || !strings.Contains(errs, "Found previous offset information for this group group1. Please use --delete-consumer-offsets to delete previous offsets metadata") {
		t.Fatalf("--from-beginning with stored offsets: %d %q %q", code, out, errs)
	}
	code, out, errs = runTool(t, Options{ZooKeeper: connect, Topic: "t", Group: "group1", FromBeginning: true, DeleteConsumerOffsets: true, MaxMessages: 5})
	if code != 0 || out != "a\nb\nc\nd\ne\n" {
		t.Fatalf("--delete-consumer-offsets: %d %q %q", code, out, errs)
	}
	// auto.commit.enable=false: nothing recorded, not even on exit.
	code, _, errs = runTool(t, Options{ZooKeeper: connect, Topic: "t", Group: "nocommit", FromBeginning: true, MaxMessages: 2,
		ConsumerProps: []string{"auto.commit.enable=false"}})
	if code != 0 || zkGet(t, zk, "/consumers/nocommit/offsets/t/0") != "" {
		t.Fatalf("auto.commit.enable=false: %d %q, znode %q", code, errs, zkGet(t, zk, "/consumers/nocommit/offsets/t/0"))
	}
	// Bad input: refused before anything is registered.
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{ZooKeeper: connect, Include: "t.*", Group: "g2"}, "--include with --zookeeper and --group is not supported"},
		{Options{ZooKeeper: connect, Topic: "t", Group: "g2", ConsumerProps: []string{"offsets.storage=kafka"}}, "offsets.storage=kafka is not supported"},
		{Options{BootstrapServer: addr, Topic: "t", Group: "g2", DeleteConsumerOffsets: true}, "--delete-consumer-offsets needs --zookeeper"},
		{Options{BootstrapServer: addr, Topic: "t", Group: "g2", ConsumerProps: []string{"auto.commit.enable=true"}}, "auto.commit.enable: an old-consumer property"},
	} {
		code, _, errs := runTool(t, tc.o)
		if code != 1 || !strings.Contains(errs, tc.want) {
			t.Errorf("%+v: %d %q, want %q", tc.o, code, errs, tc.want)
		}
	}
	if ok, _ := zk.Exists("/consumers/g2"); ok {
		t.Fatal("a refused run registered /consumers/g2")
	}
}

// TestOldConsumerRegistersAndCommitsPeriodically: while it runs, the old
// consumer is registered under /consumers/<g>/ids and owns each partition
// under /consumers/<g>/owners as "<consumer id>-0"; its offsets reach
// ZooKeeper every auto.commit.interval.ms; a second consumer of the group
// is refused (no rebalance) without disturbing the first.
func TestOldConsumerRegistersAndCommitsPeriodically(t *testing.T) {
	addr := setupCluster(t, 2, rec(0, "", "x0"), rec(1, "", "y0"), rec(1, "", "y1"))
	connect := clienttest.ZooKeeperWithBroker(t, addr)
	zk, err := zkstore.Open(connect, zkstore.Config{SessionTimeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer zk.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, Options{ZooKeeper: connect, Topic: "t", Group: "live", FromBeginning: true, MaxMessages: -1, TimeoutMs: -1, Partition: -1,
			ConsumerProps: []string{"auto.commit.interval.ms=100"}}, &out, &errb)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for zkGet(t, zk, "/consumers/live/offsets/t/0") != "1" || zkGet(t, zk, "/consumers/live/offsets/t/1") != "2" {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("periodic commit never reached ZooKeeper: %q %q; stderr %q", zkGet(t, zk, "/consumers/live/offsets/t/0"), zkGet(t, zk, "/consumers/live/offsets/t/1"), errb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	ids, err := zk.Children("/consumers/live/ids")
	if err != nil || len(ids) != 1 || !strings.HasPrefix(ids[0], "live_") {
		t.Fatalf("ids %v %v", ids, err)
	}
	reg := zkGet(t, zk, "/consumers/live/ids/"+ids[0])
	if !strings.HasPrefix(reg, `{"version":1,"subscription":{"t":1},"pattern":"white_list","timestamp":"`) {
		t.Fatalf("registration %q", reg)
	}
	for p := 0; p < 2; p++ {
		if got := zkGet(t, zk, fmt.Sprintf("/consumers/live/owners/t/%d", p)); got != ids[0]+"-0" {
			t.Fatalf("owner of %d: %q, want %q", p, got, ids[0]+"-0")
		}
	}
	code, _, errs := runTool(t, Options{ZooKeeper: connect, Topic: "t", Group: "live", MaxMessages: 1})
	if code != 1 || !strings.Contains(errs, "partition t-0 of group live is owned by "+ids[0]+"-0") {
		t.Fatalf("second consumer: %d %q", code, errs)
	}
	if ids2, _ := zk.Children("/consumers/live/ids"); len(ids2) != 1 {
		t.Fatalf("the refused consumer stayed registered: %v", ids2)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(errb.String(), "Processed a total of 3 messages") {
			t.Fatalf("first consumer: %d %q", code, errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("consumer did not stop")
	}
	if ok, _ := zk.Exists("/consumers/live/owners/t/0"); ok {
		t.Fatal("owner left after exit")
	}
}
