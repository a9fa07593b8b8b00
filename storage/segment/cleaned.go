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
	return create(dir, base, cfg, suffix)
}

// ReplaceSuffix renames the segment's files (the .txnindex only once it
// exists) from <name>+from to <name>+to (from or to may be "", e.g.
// CleanedSuffix → SwapSuffix → ""). The .log file is renamed last when
// stripping a suffix so that a crash leaves either the complete set or a
// recoverable .swap. Open handles keep working.
func (s *Segment) ReplaceSuffix(from, to string) error {
	s.fmu.Lock()
	defer s.fmu.Unlock()
	paths := []*string{&s.index.path, &s.tindex.path, &s.logPath}
	if s.txn.exists {
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
