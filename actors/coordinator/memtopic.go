package coordinator

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/storage/record"
)

// MemTopic is an in-memory OffsetsTopic for tests (of this package and of
// wire/handlers): every partition is led locally by broker 0 at
// 127.0.0.1:9092 unless changed, appended batches are validated with the
// record package and kept as bytes, so Load really decodes what Append got.
type MemTopic struct {
	mu       sync.Mutex
	ensured  int
	parts    map[int32][][]byte
	notLocal map[int32]bool
	loads    map[int32]int
	held     int      // Loads waiting at gate
	gate     *memGate // non-nil: Loads wait for it to open
	// appendGate, if non-nil, holds Appends until it opens; its err is then
	// their result (nil: appended). appendsHeld counts the waiting.
	appendGate  *memGate
	appendsHeld int
	// AppendErr, if set, fails every Append (e.g. kerr.NotEnoughReplicas).
	AppendErr error
	Host      string
	Port      int32
	NodeID    int32
}

// NewMemTopic returns an empty MemTopic.
func NewMemTopic() *MemTopic {
	return &MemTopic{parts: map[int32][][]byte{}, notLocal: map[int32]bool{}, loads: map[int32]int{}, Host: "127.0.0.1", Port: 9092}
}

// Ensure implements OffsetsTopic; Ensured counts the calls.
func (m *MemTopic) Ensure(context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ensured++
	return nil
}

// Ensured is how many times Ensure was called.
func (m *MemTopic) Ensured() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ensured
}

// SetLocal makes this broker lead (or not) a partition.
func (m *MemTopic) SetLocal(p int32, local bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notLocal[p] = !local
}

// SetAppendErr sets AppendErr under the lock.
func (m *MemTopic) SetAppendErr(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.AppendErr = err
}

// HoldAppends makes every Append that starts from now on wait (as an
// acks=-1 produce waits for slow followers) until release(err) is called
// or the Append's context ends (REQUEST_TIMED_OUT, as the produce path's
// timeout). release(nil) lets them append; release(err) fails them with
// err and appends nothing. For tests of what a group does while its
// writes are in flight.
func (m *MemTopic) HoldAppends() (release func(err error)) { return m.hold(&m.appendGate) }

// memGate holds the Loads or Appends of a MemTopic until it opens; err is
// set (under the MemTopic's lock) before open closes.
type memGate struct {
	open chan struct{}
	err  error
}

// hold installs a new gate in *slot and returns what opens it with err.
func (m *MemTopic) hold(slot **memGate) func(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g := &memGate{open: make(chan struct{})}
	*slot = g
	var once sync.Once
	return func(err error) {
		once.Do(func() {
			m.mu.Lock()
			g.err = err
			if *slot == g {
				*slot = nil
			}
			m.mu.Unlock()
			close(g.open)
		})
	}
}

// AppendsHeld is how many Appends wait for HoldAppends' release.
func (m *MemTopic) AppendsHeld() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.appendsHeld
}

// Appended is how many batches partition p holds.
func (m *MemTopic) Appended(p int32) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.parts[p])
}

// Append implements OffsetsTopic.
func (m *MemTopic) Append(ctx context.Context, p int32, batch []byte) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if gate := m.appendGate; gate != nil {
		m.appendsHeld++
		m.mu.Unlock()
		var err error
		select {
		case <-gate.open:
		case <-ctx.Done():
			err = kerr.RequestTimedOut
		}
		m.mu.Lock()
		m.appendsHeld--
		if err == nil {
			err = gate.err
		}
		if err != nil {
			return -1, err
		}
	}
	if m.AppendErr != nil {
		return -1, m.AppendErr
	}
	h, err := record.ParseHeader(batch)
	if err != nil {
		return -1, err
	}
	var next int64
	if bs := m.parts[p]; len(bs) > 0 {
		last, _ := record.ParseHeader(bs[len(bs)-1])
		next = last.NextOffset()
	}
	b := append([]byte(nil), batch...)
	record.SetBaseOffset(b, next)
	_ = h
	m.parts[p] = append(m.parts[p], b)
	return next, nil
}

// HoldLoads makes every Load that starts from now on wait, after taking
// its snapshot of the partition, until the returned release is called (or
// its context ends). For tests of what happens while a partition loads.
func (m *MemTopic) HoldLoads() (release func()) {
	open := m.hold(&m.gate)
	return func() { open(nil) }
}

// Held is how many Loads wait for HoldLoads' release (their snapshot taken).
func (m *MemTopic) Held() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held
}

// Loads is how many Loads of partition p have finished.
func (m *MemTopic) Loads(p int32) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loads[p]
}

// Load implements OffsetsTopic.
func (m *MemTopic) Load(ctx context.Context, p int32, fn func(r *LogRecord) error) error {
	m.mu.Lock()
	batches := append([][]byte(nil), m.parts[p]...)
	gate := m.gate
	if gate != nil {
		m.held++
	}
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.loads[p]++
		m.mu.Unlock()
	}()
	if gate != nil {
		var err error
		select {
		case <-gate.open:
		case <-ctx.Done():
			err = ctx.Err()
		}
		m.mu.Lock()
		m.held--
		m.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return eachMemRecord(ctx, batches, fn)
}

func eachMemRecord(ctx context.Context, batches [][]byte, fn func(r *LogRecord) error) error {
	for _, b := range batches {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := record.ParseHeader(b)
		if err != nil {
			return err
		}
		err = record.Records(h, b, 1<<26, func(r *record.Record) error {
			return fn(&LogRecord{Key: r.Key, Value: r.Value, Offset: r.Offset(&h), BatchOffset: h.BaseOffset,
				ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch, Transactional: h.IsTransactional(), Control: h.IsControl()})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Records returns every (key, value) of a partition in offset order,
// control records (transaction markers) excepted.
func (m *MemTopic) Records(p int32) []Record {
	var out []Record
	m.mu.Lock()
	batches := append([][]byte(nil), m.parts[p]...)
	m.mu.Unlock()
	_ = eachMemRecord(context.Background(), batches, func(lr *LogRecord) error {
		if lr.Control {
			return nil
		}
		r := Record{Key: append([]byte(nil), lr.Key...)}
		if lr.Value != nil {
			r.Value = append([]byte{}, lr.Value...)
		}
		out = append(out, r)
		return nil
	})
	return out
}

// Batches returns a copy of partition p's batches, in offset order, as
// appended (base offsets assigned).
func (m *MemTopic) Batches(p int32) [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([][]byte, len(m.parts[p]))
	for i, b := range m.parts[p] {
		out[i] = append([]byte(nil), b...)
	}
	return out
}

// AppendMarker appends a transaction marker of producer to partition p:
// a control batch with one COMMIT (commit) or ABORT record, as the
// partition's WriteTxnMarkers handler writes it. It returns the marker's
// offset.
func (m *MemTopic) AppendMarker(p int32, producerID int64, epoch int16, commit bool) (int64, error) {
	b, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1, Control: true, Transactional: true,
		Producer: &record.Producer{ID: producerID, Epoch: epoch, BaseSequence: record.NoSequence}},
		[]record.BatchRecord{record.EndTxnMarker(commit, 0)})
	if err != nil {
		return -1, err
	}
	return m.Append(context.Background(), p, b)
}

// IsLocalLeader implements OffsetsTopic.
func (m *MemTopic) IsLocalLeader(p int32) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return !m.notLocal[p]
}

// Leader implements OffsetsTopic.
func (m *MemTopic) Leader(p int32) (int32, string, int32, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.NodeID, m.Host, m.Port, true
}
