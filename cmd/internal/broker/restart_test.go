package broker

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCommittedOffsetsAfterRestart: the restart path of the construction
// order in Start (coordinator, then replica manager, then controller; the
// offsets-topic store usable before the controller starts): the groups of
// a restarted single node are listed and their offsets served. (The
// coordinator also loads a partition lazily on a request, so this does
// not by itself show that no leadership event is lost: that follows from
// the coordinator existing before the replica manager.)
func TestCommittedOffsetsAfterRestart(t *testing.T) {
	cfg, _ := configOnFreePort(t, map[string]string{
		"log.dirs":                     filepath.Join(t.TempDir(), "data"),
		"offsets.topic.num.partitions": "3",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	withAdmin := func(fn func(adm *kadm.Client)) {
		t.Helper()
		withBroker(t, cfg, func(cl *kgo.Client) { fn(kadm.NewClient(cl)) })
	}
	withAdmin(func(adm *kadm.Client) {
		if _, err := adm.CreateTopic(ctx, 2, 1, nil, "t"); err != nil {
			t.Fatal(err)
		}
		var os kadm.Offsets
		os.Add(kadm.Offset{Topic: "t", Partition: 1, At: 42, LeaderEpoch: -1})
		resp, err := adm.CommitOffsets(ctx, "g", os)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			t.Fatalf("commit: %v", err)
		}
	})
	withAdmin(func(adm *kadm.Client) {
		// ListGroups asks no group: only partitions loaded on their
		// leadership list theirs.
		groups, err := adm.ListGroups(ctx)
		if err != nil {
			t.Fatalf("list groups after restart: %v", err)
		}
		if !slices.Equal(groups.Groups(), []string{"g"}) {
			t.Fatalf("groups after restart %v, want [g]", groups.Groups())
		}
		got, err := adm.FetchOffsets(ctx, "g")
		if err == nil {
			err = got.Error()
		}
		if err != nil {
			t.Fatalf("fetch offsets after restart: %v", err)
		}
		o, ok := got.Lookup("t", 1)
		if !ok || o.At != 42 {
			t.Fatalf("offset of t-1 after restart: %+v (found %t), want 42", o, ok)
		}
	})
}
