package partition

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// ProducerIDBlockSize is how many producer ids are reserved on disk at a
// time (Kafka's ProducerIdManager reserves blocks of 1000 in ZooKeeper
// /latest_producer_id_block).
const ProducerIDBlockSize = 1000

// ProducerIDFile is the file in the first log dir that holds the end of
// the last reserved producer id block.
const ProducerIDFile = "producer-id-block"

// ProducerIDs hands out unique producer ids for InitProducerId (KIP-98).
// Ids are reserved in blocks: the end of the current block is written
// (atomically: temp file, fsync, rename) before any id of it is handed out,
// so after a crash or restart the next block starts past every id ever
// given, and no id is reused. Safe for concurrent use.
type ProducerIDs struct {
	path string
	// block, when set, reserves the next block cluster-wide instead of in
	// path (ZooKeeper's /latest_producer_id_block; see NewBlockProducerIDs).
	block func() (start, end int64, err error)
	mu    sync.Mutex
	next  int64 // next id to hand out
	end   int64 // first id past the reserved block
}

// OpenProducerIDs reads dir/ProducerIDFile (absent = start at 0).
func OpenProducerIDs(dir string) (*ProducerIDs, error) {
	p := &ProducerIDs{path: filepath.Join(dir, ProducerIDFile)}
	b, err := os.ReadFile(p.path)
	switch {
	case os.IsNotExist(err):
	case err != nil:
		return nil, fmt.Errorf("producer ids: %w", err)
	default:
		v, perr := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if perr != nil || v < 0 {
			return nil, fmt.Errorf("producer ids: bad %s: %q", p.path, b)
		}
		p.next, p.end = v, v
	}
	return p, nil
}

// NewBlockProducerIDs hands out ids from blocks that block reserves
// (cluster mode: every broker reserves from the same ZooKeeper counter, so
// no two brokers hand out the same producer id). block returns [start, end).
func NewBlockProducerIDs(block func() (start, end int64, err error)) *ProducerIDs {
	return &ProducerIDs{block: block}
}

// Next returns a producer id never returned before by this broker.
func (p *ProducerIDs) Next() (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next >= p.end && p.block != nil {
		start, end, err := p.block()
		if err != nil {
			return -1, fmt.Errorf("producer ids: reserve block: %w", err)
		}
		p.next, p.end = start, end
	}
	if p.next >= p.end {
		end := p.next + ProducerIDBlockSize
		if err := writeFileAtomic(p.path, []byte(strconv.FormatInt(end, 10)+"\n")); err != nil {
			return -1, fmt.Errorf("producer ids: reserve block: %w", err)
		}
		p.end = end
	}
	id := p.next
	p.next++
	return id, nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := firstErr(werr, serr, cerr); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
