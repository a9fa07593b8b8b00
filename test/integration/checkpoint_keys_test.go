package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// inode is path's inode number, 0 when it does not exist. A checkpoint is
// written to a temporary file renamed over the old one, so every rewrite
// gives the path a new inode.
func inode(path string) uint64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// Each checkpoint file is rewritten on its own key's period:
// replica.high.watermark.checkpoint.interval.ms=250 rewrites
// replication-offset-checkpoint about 12 times in 3 s,
// log.flush.start.offset.checkpoint.interval.ms=500 log-start-offset-checkpoint
// about 6 times, and log.flush.offset.checkpoint.interval.ms=1h never
// rewrites recovery-point-offset-checkpoint (with the 5 s / 60 s / 60 s
// defaults the first two would be rewritten at most once). None of the keys
// is warned about as ignored.
func TestCheckpointIntervals(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{
		"replica.high.watermark.checkpoint.interval.ms": "250",
		"log.flush.start.offset.checkpoint.interval.ms": "500",
		"log.flush.offset.checkpoint.interval.ms":       "3600000",
	})
	createTopic(t, b, "ckpt", 1, nil)
	cl := b.Client(kgo.DefaultProduceTopic("ckpt"))
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"hw":       filepath.Join(b.DataDir, "replication-offset-checkpoint"),
		"logstart": filepath.Join(b.DataDir, "log-start-offset-checkpoint"),
		"recovery": filepath.Join(b.DataDir, "recovery-point-offset-checkpoint"),
	}
	// The periodic files exist once their first pass ran.
	deadline := time.Now().Add(10 * time.Second)
	for inode(files["hw"]) == 0 || inode(files["logstart"]) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("replication-offset-checkpoint / log-start-offset-checkpoint not written within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	rewrites := map[string]int{}
	last := map[string]uint64{}
	for k, p := range files {
		last[k] = inode(p)
	}
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		for k, p := range files {
			if n := inode(p); n != 0 && n != last[k] {
				rewrites[k]++
				last[k] = n
			}
		}
	}
	t.Logf("rewrites in 3 s: %v", rewrites)
	if n := rewrites["hw"]; n < 5 || n > 20 {
		t.Errorf("replication-offset-checkpoint rewritten %d times in 3 s at a 250 ms period, want 5..20", n)
	}
	if n := rewrites["logstart"]; n < 2 || n > 10 {
		t.Errorf("log-start-offset-checkpoint rewritten %d times in 3 s at a 500 ms period, want 2..10", n)
	}
	if n := rewrites["recovery"]; n != 0 {
		t.Errorf("recovery-point-offset-checkpoint rewritten %d times in 3 s at a 1 h period", n)
	}
	if log := b.Log(); strings.Contains(log, "checkpoint.interval.ms' was supplied but") {
		t.Errorf("a checkpoint key was warned about as ignored:\n%s", log)
	}
}
