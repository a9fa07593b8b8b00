package replicaselector

import (
	"testing"
	"time"
)

func rack(s string) *string { return &s }

func TestRackAware(t *testing.T) {
	leader := Replica{ID: 1, Rack: rack("r1"), LogEndOffset: 100}
	f2 := Replica{ID: 2, Rack: rack("r2"), LogEndOffset: 100, SinceCaughtUp: time.Second}
	f3 := Replica{ID: 3, Rack: rack("r3"), LogEndOffset: 100}
	f4behind := Replica{ID: 4, Rack: rack("r2"), LogEndOffset: 90}
	f5stale := Replica{ID: 5, Rack: rack("r2"), LogEndOffset: 100, SinceCaughtUp: 5 * time.Second}
	f6 := Replica{ID: 6, Rack: rack("r2"), LogEndOffset: 100, SinceCaughtUp: time.Second}
	noRack := Replica{ID: 7, LogEndOffset: 100}
	for _, c := range []struct {
		name       string
		clientRack string
		leader     Replica
		cands      []Replica
		want       int32
		follower   bool
	}{
		{"no client rack: leader", "", leader, []Replica{f2, f3}, 1, false},
		{"same rack follower", "r2", leader, []Replica{f2, f3}, 2, true},
		{"leader in client rack", "r1", leader, []Replica{f2, f3}, 1, false},
		{"no replica in rack: leader", "r9", leader, []Replica{f2, f3}, 1, false},
		{"no candidates: leader", "r2", leader, nil, 1, false},
		{"most caught up log end offset wins", "r2", leader, []Replica{f4behind, f2}, 2, true},
		{"equal offsets: most recently caught up", "r2", leader, []Replica{f5stale, f2}, 2, true},
		{"full tie: highest id", "r2", leader, []Replica{f6, f2}, 6, true},
		{"brokers without rack never match", "r2", leader, []Replica{noRack}, 1, false},
		{"leader without rack, follower in rack", "r2", Replica{ID: 1, LogEndOffset: 100}, []Replica{f2}, 2, true},
		{"leader listed among candidates is not a follower", "r1", Replica{ID: 1, Rack: rack("r0")}, []Replica{{ID: 1, Rack: rack("r1")}}, 1, false},
	} {
		got, follower := RackAware(c.clientRack, c.leader, c.cands)
		if got != c.want || follower != c.follower {
			t.Errorf("%s: got (%d, %v), want (%d, %v)", c.name, got, follower, c.want, c.follower)
		}
	}
}
