// Package chaos runs Gregor under faults and proves nothing acknowledged
// was lost: a 3-broker cluster on a real ZooKeeper, an idempotent acks=all
// producer, a group consumer and a transactional consume-transform-produce
// pipeline (franz-go's GroupTransactSession, copying the topic to another
// with some transactions aborted on purpose) run while partition, fetcher,
// group, controller-channel, controller and transaction coordinator actors
// are killed through each broker's admin listener (POST /faults) and whole
// brokers are SIGKILLed and restarted, every other time the one leading
// the pipeline's __transaction_state partition.
// At the end the checker reads every replica's log straight from the
// brokers' log directories (the segment files, decoded with
// storage/record) and proves: every acknowledged record is present exactly
// once at the offset it was acknowledged at, no offset below the high
// watermark is missing, all replicas are identical below the high
// watermark, committed group offsets never went backwards, and every
// partition is back to its full ISR. For the pipeline (eos.go): every
// transaction completed (each output partition's last stable offset is
// back at its high watermark), and the output's committed records —
// replayed from the leader's log as a read_committed consumer reads it,
// markers included, and read by a real read_committed consumer too — hold
// every input record exactly once and nothing else.
//
// The test (TestChaos) runs a short version in `make test`; `make chaos
// DURATION=10m` runs it for as long as asked. This file and check.go hold
// the log reader and the checker (plain code, unit-tested without a
// cluster); the cluster, workload and fault loop are in the _test files.
package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gregor/storage/record"
)

// Entry is one record of a replica's log as read from its segment files:
// a data record, or a control record (a transaction marker).
type Entry struct {
	Offset      int64
	LeaderEpoch int32 // the batch's partitionLeaderEpoch
	ProducerID  int64
	Key, Value  string
	// Transactional: the record's batch has the transactional attribute.
	Transactional bool
	// Control: a control record (WriteTxnMarkers' COMMIT or ABORT marker
	// of ProducerID's transaction); Commit tells which.
	Control, Commit bool
}

// ReplicaLog is one replica's log, in offset order.
type ReplicaLog struct {
	Dir     string
	Entries []Entry
	// Problems lists what the reader could not decode (a corrupt batch in
	// the middle of a segment). A torn batch at the very end of the last
	// segment (a SIGKILL mid-write that recovery had not cut yet) is not a
	// problem: it is past any high watermark.
	Problems []string
}

// LogEndOffset is the offset after the last entry (0 for an empty log).
func (l *ReplicaLog) LogEndOffset() int64 {
	if len(l.Entries) == 0 {
		return 0
	}
	return l.Entries[len(l.Entries)-1].Offset + 1
}

// maxUncompressed bounds the decompressed size of one batch (the checker
// reads logs it wrote itself; 64 MiB is far above any batch it produces).
const maxUncompressed = 64 << 20

// ReadReplicaLog reads every record of the partition directory dir (Kafka's
// layout: <log.dirs>/<topic>-<partition>/<20-digit base offset>.log),
// segment by segment in base-offset order, checking each batch's CRC.
// It returns an error only when dir or a segment cannot be read at all.
func ReadReplicaLog(dir string) (*ReplicaLog, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names) // 20-digit zero-padded base offsets sort numerically
	out := &ReplicaLog{Dir: dir}
	for i, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("chaos: read segment: %w", err)
		}
		last := i == len(names)-1
		if err := out.readSegment(filepath.Base(name), data, last); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (l *ReplicaLog) readSegment(name string, data []byte, last bool) error {
	pos := 0
	for pos < len(data) {
		rest := data[pos:]
		if len(rest) < record.HeaderSize || allZero(rest[:record.LogOverhead]) {
			// End of the written part (a torn tail or preallocated zeros).
			if !last && !allZero(rest) {
				l.Problems = append(l.Problems, fmt.Sprintf("%s@%d: %d trailing bytes in a non-last segment", name, pos, len(rest)))
			}
			return nil
		}
		h, batch, err := record.ValidateIntegrity(rest)
		if err != nil {
			if last && h.Size() > len(rest) {
				return nil // torn final batch
			}
			l.Problems = append(l.Problems, fmt.Sprintf("%s@%d: %v", name, pos, err))
			return nil
		}
		err = record.Records(h, batch, maxUncompressed, func(r *record.Record) error {
			e := Entry{Offset: r.Offset(&h), LeaderEpoch: h.PartitionLeaderEpoch, ProducerID: h.ProducerID,
				Key: string(r.Key), Value: string(r.Value), Transactional: h.IsTransactional(), Control: h.IsControl()}
			if e.Control {
				_, typ, err := record.ControlKey(r.Key)
				if err != nil {
					return fmt.Errorf("offset %d: control record: %w", e.Offset, err)
				}
				e.Commit = typ == record.ControlCommit
			}
			l.Entries = append(l.Entries, e)
			return nil
		})
		if err != nil {
			l.Problems = append(l.Problems, fmt.Sprintf("%s@%d: records: %v", name, pos, err))
		}
		pos += len(batch)
	}
	return nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// PartitionDir is the directory of topic-partition under a log dir.
func PartitionDir(logDir, topic string, partition int32) string {
	return filepath.Join(logDir, fmt.Sprintf("%s-%d", topic, partition))
}

// describe is a short form of an entry for reports.
func (e Entry) describe() string {
	if e.Control {
		what := "ABORT"
		if e.Commit {
			what = "COMMIT"
		}
		return fmt.Sprintf("offset %d epoch %d %s marker of producer %d", e.Offset, e.LeaderEpoch, what, e.ProducerID)
	}
	v := e.Value
	if len(v) > 40 {
		v = v[:40] + "…"
	}
	return fmt.Sprintf("offset %d epoch %d value %q", e.Offset, e.LeaderEpoch, strings.ToValidUTF8(v, "?"))
}
