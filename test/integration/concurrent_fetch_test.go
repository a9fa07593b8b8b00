package integration

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/harness"
)

// TestConcurrentConsumersSeeEveryByte has many consumers read the same
// segments at once (zero-copy sendfile from shared segment files) and checks
// every record's bytes, so a fetch that used a shared file offset would show
// up as corrupt or misplaced data.
func TestConcurrentConsumersSeeEveryByte(t *testing.T) {
	const (
		records   = 20_000
		consumers = 8
	)
	b := harness.StartBroker(t, map[string]string{"log.segment.bytes": "1048576"}) // several segments
	createTopic(t, b, "shared", 2, nil)
	value := func(p int32, off int64) []byte {
		return bytes.Repeat([]byte(fmt.Sprintf("<%d:%d>", p, off)), 20)
	}
	cl := b.Client(kgo.DefaultProduceTopic("shared"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	next := [2]int64{}
	for i := 0; i < records; i++ {
		p := int32(i % 2)
		r := &kgo.Record{Partition: p, Value: value(p, next[p])}
		next[p]++
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			if err != nil {
				t.Errorf("produce: %v", err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, consumers)
	for c := 0; c < consumers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumeTopics("shared"),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(256<<10))
			if err != nil {
				errs <- err
				return
			}
			defer rd.Close()
			seen := 0
			for seen < records {
				fs := rd.PollFetches(ctx)
				if ctx.Err() != nil {
					errs <- fmt.Errorf("consumer read %d of %d records before timeout", seen, records)
					return
				}
				for _, r := range fs.Records() {
					if !bytes.Equal(r.Value, value(r.Partition, r.Offset)) {
						errs <- fmt.Errorf("record %d/%d holds %.40q…", r.Partition, r.Offset, r.Value)
						return
					}
					seen++
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
