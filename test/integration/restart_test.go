package integration

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// TestAcknowledgedRecordsSurviveStop stops the broker in the middle of a
// produce stream — cleanly with SIGTERM, and uncleanly with SIGKILL — then
// restarts it: every record the broker acknowledged must be readable at its
// acknowledged offset with its value.
func TestAcknowledgedRecordsSurviveStop(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			b := harness.StartBroker(t, nil)
			createTopic(t, b, "durable", 2, nil)

			type pos struct {
				p   int32
				off int64
			}
			var mu sync.Mutex
			acked := map[pos]string{}

			cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic("durable"),
				kgo.RecordRetries(0), kgo.RequestRetries(0), kgo.ProduceRequestTimeout(5*time.Second),
				kgo.RecordDeliveryTimeout(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan struct{})
			var produced sync.WaitGroup
			produced.Add(1)
			go func() { // the producer: bounded in count, stops when the broker is gone
				defer produced.Done()
				for i := 0; i < 200_000 && ctx.Err() == nil; i++ {
					v := fmt.Sprintf("v-%d", i)
					cl.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
						if err == nil {
							mu.Lock()
							acked[pos{r.Partition, r.Offset}] = v
							mu.Unlock()
						}
					})
					if i%1000 == 999 {
						select {
						case <-stopped:
							return
						default:
						}
					}
				}
			}()
			// Stop the broker once a good number of records are acknowledged.
			deadline := time.Now().Add(time.Minute)
			for {
				mu.Lock()
				n := len(acked)
				mu.Unlock()
				if n >= 20_000 || time.Now().After(deadline) {
					break
				}
				time.Sleep(10 * time.Millisecond) // waiting on an external process's progress
			}
			b.Signal(sig)
			close(stopped)
			cancel()
			produced.Wait()
			cl.Close()

			mu.Lock()
			want := make(map[pos]string, len(acked))
			for k, v := range acked {
				want[k] = v
			}
			mu.Unlock()
			if len(want) == 0 {
				t.Fatal("no record was acknowledged before the stop")
			}
			t.Logf("%d records acknowledged before %v", len(want), sig)

			b.Start()
			rd := b.Client(kgo.ConsumeTopics("durable"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer rcancel()
			found := 0
			for found < len(want) {
				fs := rd.PollFetches(rctx)
				if rctx.Err() != nil {
					t.Fatalf("read back %d of %d acknowledged records", found, len(want))
				}
				for _, r := range fs.Records() {
					if v, ok := want[pos{r.Partition, r.Offset}]; ok {
						if string(r.Value) != v {
							t.Fatalf("offset %d/%d holds %q, acknowledged %q", r.Partition, r.Offset, r.Value, v)
						}
						found++
					}
				}
			}
		})
	}
}
