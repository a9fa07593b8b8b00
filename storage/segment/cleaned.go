package segment

import (
	"fmt"
	"os"
	"strings"
)

// CreateWithSuffix makes a new empty segment with base offset base whose
// three files carry suffix after their usual names (e.g.
// 00000000000000000000.log.cleaned with CleanedSuffix): the log cleaner's
// output, invisible to recovery as a segment until renamed. Existing files
// of those names are replaced.
func CreateWithSuffix(dir string, base int64, cfg Config, suffix string) (*Segment, error) {
	s := newSegment(dir, base, cfg)
	s.logPath += suffix
	f, err := os.OpenFile(s.logPath, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create segment: %w", err)
	}
	s.log = f
	s.txn.path += suffix
	for _, p := range []string{Path(dir, base, IndexSuffix) + suffix, Path(dir, base, TimeIndexSuffix) + suffix, s.txn.path} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			f.Close()
			return nil, fmt.Errorf("create segment: %w", err)
		}
	}
	if s.index, err = openOffsetIndex(Path(dir, base, IndexSuffix)+suffix, base, cfg.MaxIndexBytes, false, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("create segment: %w", err)
	}
	if s.tindex, err = openTimeIndex(Path(dir, base, TimeIndexSuffix)+suffix, base, cfg.MaxIndexBytes, false); err != nil {
		f.Close()
		s.index.Close()
		return nil, fmt.Errorf("create segment: %w", err)
	}
	return s, nil
}

// ReplaceSuffix renames the segment's files (the .txnindex only once it
// exists) from <name>+from to <name>+to (from or to may be "", e.g.
// CleanedSuffix → SwapSuffix → ""). The .log file is renamed last when
// stripping a suffix so that a crash leaves either the complete set or a
// recoverable .swap. Open handles keep working.
func (s *Segment) ReplaceSuffix(from, to string) error {
	paths := []*string{&s.index.path, &s.tindex.path, &s.logPath}
	if s.txn.exists() {
		paths = []*string{&s.index.path, &s.tindex.path, &s.txn.path, &s.logPath}
	} else {
		s.txn.path = strings.TrimSuffix(s.txn.path, from) + to
	}
	for _, p := range paths {
		if !strings.HasSuffix(*p, from) {
			return fmt.Errorf("rename %s: no suffix %q", *p, from)
		}
	}
	for _, p := range paths {
		np := strings.TrimSuffix(*p, from) + to
		if err := os.Rename(*p, np); err != nil {
			return fmt.Errorf("rename %s: %w", *p, err)
		}
		*p = np
	}
	return nil
}
