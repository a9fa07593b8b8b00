package harness

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// CommitUncommitted commits what cl has polled. A commit may fail while the
// group rebalances or its coordinator moves or recovers (retriable
// errors), so it retries, 200 ms apart, until one succeeds; t fails after
// 60 s. what names the commit in the messages.
func CommitUncommitted(t testing.TB, cl *kgo.Client, what string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		err := cl.CommitUncommittedOffsets(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: commit: %v", what, err)
		}
		t.Logf("%s: commit failed, retrying: %v", what, err)
		time.Sleep(200 * time.Millisecond)
	}
}
