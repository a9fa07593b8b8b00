package txncoordinator

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"gregor/actors"
	"gregor/actors/coordinator"
)

// BenchmarkTransactionCycle measures the coordinator's own cost of one
// transaction (AddPartitionsToTxn of 3 partitions, EndTxn commit, the
// markers to an in-process target, the completion), 16 transactional ids
// of one partition cycling concurrently over an in-memory log.
func BenchmarkTransactionCycle(b *testing.B) {
	sys := actors.NewSystem(zap.NewNop())
	c, err := New(sys, Options{Partitions: 1, Topic: coordinator.NewMemTopic(), Markers: newFakeMarkers(), IDs: &fakeIDs{}, RetryBackoff: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { c.Stop(); sys.Shutdown() }()
	c.LeadershipChanged(0, true, 1)
	const producers = 16
	type prod struct {
		id    string
		pid   int64
		epoch int16
	}
	ps := make([]prod, producers)
	for i := range ps {
		ps[i].id = fmt.Sprintf("bench-%d", i)
		for {
			ch := make(chan [3]int64, 1)
			c.InitProducerID(ps[i].id, 60000, -1, -1, func(p int64, e int16, code int16) { ch <- [3]int64{p, int64(e), int64(code)} })
			r := <-ch
			if r[2] == 0 {
				ps[i].pid, ps[i].epoch = r[0], int16(r[1])
				break
			}
			time.Sleep(time.Millisecond) // loading
		}
	}
	parts := map[string][]int32{"out": {0, 1, 2}}
	b.ResetTimer()
	var wg sync.WaitGroup
	per := b.N/producers + 1
	for i := range ps {
		p := ps[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < per; n++ {
				for {
					ch := make(chan int16, 1)
					c.AddPartitions(p.id, p.pid, p.epoch, parts, func(code int16) { ch <- code })
					if <-ch == 0 {
						break // CONCURRENT_TRANSACTIONS while the last one completes
					}
				}
				ch := make(chan int16, 1)
				c.EndTxn(p.id, p.pid, p.epoch, true, func(code int16) { ch <- code })
				if code := <-ch; code != 0 {
					b.Errorf("end: %d", code)
					return
				}
			}
		}()
	}
	wg.Wait()
}
