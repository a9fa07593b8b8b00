package controller

import (
	"testing"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// TestActiveEpochFollowsTheActor: ActiveEpoch is the won epoch while the
// controller is active and 0 as soon as the actor resigns (session
// expiry), again the new epoch after it wins on the next session, and 0
// after Close: the active_controller_count gauge reads it.
func TestActiveEpochFollowsTheActor(t *testing.T) {
	e, _ := startWithSystem(t)
	if got := e.c.ActiveEpoch(); got != 1 {
		t.Fatalf("ActiveEpoch after winning the first election: %d, want 1", got)
	}
	e.c.post(event{kind: evExpired})
	waitFor(t, "ActiveEpoch 0 after the session expired", func() bool { return e.c.ActiveEpoch() == 0 })
	// The expired session's ephemeral /controller is gone (the embedded
	// store has no sessions: delete it as ZooKeeper would).
	if err := e.store.Delete(zkmeta.ControllerPath, metastore.AnyVersion); err != nil {
		t.Fatal(err)
	}
	e.c.post(event{kind: evResync})
	waitFor(t, "ActiveEpoch 2 after winning on the new session", func() bool { return e.c.ActiveEpoch() == 2 })
	e.c.Close()
	if got := e.c.ActiveEpoch(); got != 0 {
		t.Fatalf("ActiveEpoch after Close: %d, want 0", got)
	}
}
