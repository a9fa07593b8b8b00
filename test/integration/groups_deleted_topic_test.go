package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"gregor/test/harness"
)

// TestDeletedTopicDropsCommittedOffsets: committed offsets do not outlive
// their topic (Kafka's GroupCoordinator.handleDeletedPartitions). A group
// commits on two topics, one is deleted and created again with fewer
// records: consumer-groups --describe shows only the surviving topic's
// offsets, not the old ones against the new log (negative lag).
func TestDeletedTopicDropsCommittedOffsets(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "gone", 2, nil)
	createTopic(t, b, "stays", 1, nil)
	produceValues(t, b, "gone", "old", 0, 10) // 5 per partition
	produceValues(t, b, "stays", "s", 0, 4)
	adm := kadm.NewClient(b.Client())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	offs := kadm.Offsets{}
	offs.AddOffset("gone", 0, 5, -1)
	offs.AddOffset("gone", 1, 5, -1)
	offs.AddOffset("stays", 0, 3, -1)
	if err := adm.CommitAllOffsets(ctx, "stale-g", offs); err != nil {
		t.Fatal(err)
	}
	// A group with offsets only on the deleted topic disappears with it.
	only := kadm.Offsets{}
	only.AddOffset("gone", 0, 4, -1)
	if err := adm.CommitAllOffsets(ctx, "only-gone", only); err != nil {
		t.Fatal(err)
	}
	desc := binScript(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b.Addr(), "--describe", "--group", "stale-g")
	if n := describeRows(desc, "stale-g", "gone"); len(n) != 2 {
		t.Fatalf("before deletion: %d rows for gone, want 2:\n%s", len(n), desc)
	}

	if _, err := adm.DeleteTopics(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		td, err := adm.ListTopics(ctx, "gone")
		if err == nil && !td.Has("gone") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gone still listed: %v %v", td, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	createTopic(t, b, "gone", 2, nil)
	produceValues(t, b, "gone", "new", 0, 2) // log end offset 1 per partition

	desc = binScript(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b.Addr(), "--describe", "--group", "stale-g")
	if rows := describeRows(desc, "stale-g", "gone"); len(rows) != 0 {
		t.Fatalf("stale offsets of the deleted topic still shown:\n%s", desc)
	}
	stays := describeRows(desc, "stale-g", "stays")
	if len(stays) != 1 || stays[0][3] != "3" || stays[0][4] != "4" || stays[0][5] != "1" {
		t.Fatalf("the other topic's offset: rows %q, want current 3, end 4, lag 1:\n%s", stays, desc)
	}
	fetched, err := adm.FetchOffsets(ctx, "only-gone")
	if err != nil {
		t.Fatal(err)
	}
	if len(fetched) != 0 {
		t.Fatalf("only-gone still has offsets %v", fetched)
	}
	list := binScript(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b.Addr(), "--list")
	if strings.Contains(list, "only-gone") || !strings.Contains(list, "stale-g") {
		t.Fatalf("--list after deletion (want stale-g, not only-gone):\n%s", list)
	}

	// The tombstones are in __consumer_offsets: a restarted broker reloads
	// the same view.
	b.Stop()
	b.Start()
	desc = binScript(t, "", "kafka-consumer-groups.sh", "--bootstrap-server", b.Addr(), "--describe", "--group", "stale-g")
	if rows := describeRows(desc, "stale-g", "gone"); len(rows) != 0 || len(describeRows(desc, "stale-g", "stays")) != 1 {
		t.Fatalf("after restart:\n%s", desc)
	}
}

// describeRows returns the fields of the offset rows of group and topic in
// consumer-groups --describe output.
func describeRows(out, group, topic string) [][]string {
	var rows [][]string
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 6 && f[0] == group && f[1] == topic {
			rows = append(rows, f)
		}
	}
	return rows
}
