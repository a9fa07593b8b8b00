package storage

import (
	"path/filepath"
	"reflect"
	"testing"

	"gregor/storage/checkpoint"
)

func TestLeaderEpochCacheKIP101And279(t *testing.T) {
	path := filepath.Join(t.TempDir(), checkpoint.LeaderEpochFile)
	leo := int64(200)
	c, err := newLeaderEpochCache(path, func() int64 { return leo })
	if err != nil {
		t.Fatal(err)
	}
	if e, o := c.EndOffsetForEpoch(0); e != UndefinedEpoch || o != UndefinedEpochOffset {
		t.Fatalf("empty cache: %d %d", e, o)
	}
	for _, a := range []checkpoint.EpochEntry{ep(1, 0), ep(1, 10), ep(2, 50), ep(4, 120)} {
		if err := c.Assign(a.Epoch, a.StartOffset); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		req     int32
		epoch   int32
		endOffs int64
	}{
		{4, 4, 200}, // latest epoch: log end offset
		{2, 2, 120}, // next epoch's start
		{3, 2, 120}, // unknown epoch between: largest <= it, next higher's start (KIP-279)
		{0, 0, 0},   // below every entry: requested epoch, first start
		{5, UndefinedEpoch, UndefinedEpochOffset}, // above every entry
		{-1, UndefinedEpoch, UndefinedEpochOffset},
	}
	for _, k := range cases {
		if e, o := c.EndOffsetForEpoch(k.req); e != k.epoch || o != k.endOffs {
			t.Errorf("EndOffsetForEpoch(%d) = %d, %d; want %d, %d", k.req, e, o, k.epoch, k.endOffs)
		}
	}
	// A stale epoch assignment truncates newer entries (keeps monotonic).
	c.Assign(3, 100)
	want := []checkpoint.EpochEntry{ep(1, 0), ep(2, 50), ep(3, 100)}
	if got := c.Entries(); !reflect.DeepEqual(got, want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	c.truncateFromEnd(60)
	c.truncateFromStart(20)
	want = []checkpoint.EpochEntry{ep(1, 20), ep(2, 50)}
	if got := c.Entries(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after truncations %v, want %v", got, want)
	}
	// Persisted on every change.
	c2, err := newLeaderEpochCache(path, func() int64 { return 0 })
	if err != nil || !reflect.DeepEqual(c2.Entries(), want) {
		t.Fatalf("reloaded %v, %v", c2.Entries(), err)
	}
	if err := c.Assign(-1, 0); err == nil {
		t.Fatal("negative epoch accepted")
	}
}

func ep(epoch int32, start int64) checkpoint.EpochEntry {
	return checkpoint.EpochEntry{Epoch: epoch, StartOffset: start}
}
