package txnverify

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// countingObserver records VerificationDone calls.
type countingObserver struct {
	mu     sync.Mutex
	calls  int
	failed int
	total  time.Duration
}

func (o *countingObserver) VerificationDone(elapsed time.Duration, failed int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls++
	o.failed += failed
	o.total += elapsed
}

// TestObserverSeesTimeAndFailures: each answered verification is observed
// once, before its reply, with the partitions answered in error (a
// remote refusal of one partition of two: 1; a lost request: both; a
// verified local one: 0); a verification without a coordinator is
// answered at once and not observed (Kafka's verifyTransaction), nor is
// one answered after SetObserver(nil).
func TestObserverSeesTimeAndFailures(t *testing.T) {
	tr := newFakeTransport()
	m := newManager(2, &fakeLocal{}, tr)
	defer m.Close()
	o := &countingObserver{}
	m.SetObserver(o)

	r := make(result, 1)
	m.Verify("x", 5, 0, parts, r.reply)
	req := <-tr.sent
	tr.answers <- answerMsg{resp: okResponse(req, 1, "")}
	if c := r.get(t); c["t"][0] != 0 || c["t"][1] != kerr.TransactionAbortable.Code {
		t.Fatalf("answer %v", c)
	}
	o.mu.Lock()
	if o.calls != 1 || o.failed != 1 || o.total <= 0 {
		t.Fatalf("observed %d calls, %d failed, %v: want 1, 1, > 0", o.calls, o.failed, o.total)
	}
	o.mu.Unlock()

	m.Verify("y", 6, 0, parts, r.reply)
	<-tr.sent
	tr.answers <- answerMsg{err: errors.New("connection reset")}
	if c := r.get(t); c["t"][0] != kerr.NetworkException.Code {
		t.Fatalf("lost request: %v", c)
	}

	local := newManager(1, &fakeLocal{}, newFakeTransport())
	defer local.Close()
	local.SetObserver(o)
	local.Verify("z", 7, 0, parts, r.reply)
	r.get(t)

	none := newManager(-1, &fakeLocal{}, newFakeTransport())
	defer none.Close()
	none.SetObserver(o)
	none.Verify("w", 8, 0, parts, r.reply)
	r.get(t)

	m.SetObserver(nil)
	m.Verify("v", 9, 0, parts, r.reply)
	req = <-tr.sent
	tr.answers <- answerMsg{resp: okResponse(req, -1, "")}
	r.get(t)

	o.mu.Lock()
	defer o.mu.Unlock()
	if o.calls != 3 || o.failed != 3 {
		t.Fatalf("observed %d calls, %d failed partitions; want 3 calls (remote, lost, local), 3 failed (1 + 2 + 0)", o.calls, o.failed)
	}
}
