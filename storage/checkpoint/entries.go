package checkpoint

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Offset checkpoints and the leader-epoch checkpoint share Kafka's
// CheckpointFile text layout: a version line ("0"), a count line, then one
// line of whitespace-separated fields per entry.

// encodeEntries renders entries in that layout; line writes one entry's
// line, newline included.
func encodeEntries[T any](entries []T, line func(b *bytes.Buffer, e T)) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(entries))
	for _, e := range entries {
		line(&b, e)
	}
	return b.Bytes()
}

// readEntries reads a checkpoint file at path and parses every entry line:
// a line must have exactly fields fields, and parse must accept them
// (ok=false gives a *FormatError whose reason is badEntry, a format with
// one %q verb for the line). A missing file returns an error for which
// errors.Is(err, fs.ErrNotExist) holds.
func readEntries[T any](path string, fields int, badEntry string, parse func(f []string) (e T, ok bool)) ([]T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines, err := header(path, data)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(lines))
	for i, ln := range lines {
		f := strings.Fields(ln)
		if len(f) != fields {
			return nil, &FormatError{Path: path, Line: i + 3, Reason: fmt.Sprintf("want %d fields, got %q", fields, ln)}
		}
		e, ok := parse(f)
		if !ok {
			return nil, &FormatError{Path: path, Line: i + 3, Reason: fmt.Sprintf(badEntry, ln)}
		}
		out = append(out, e)
	}
	return out, nil
}

// header checks the version line (must be 0) and the count line against the
// number of entry lines, and returns the entry lines.
func header(path string, data []byte) ([]string, error) {
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) < 2 {
		return nil, &FormatError{Path: path, Reason: "missing version or count line"}
	}
	if v := strings.TrimSpace(all[0]); v != "0" {
		return nil, &FormatError{Path: path, Line: 1, Reason: fmt.Sprintf("unsupported version %q", v)}
	}
	n, err := strconv.Atoi(strings.TrimSpace(all[1]))
	if err != nil || n < 0 {
		return nil, &FormatError{Path: path, Line: 2, Reason: fmt.Sprintf("bad count %q", all[1])}
	}
	lines := all[2:]
	if len(lines) != n {
		return nil, &FormatError{Path: path, Line: 2, Reason: fmt.Sprintf("count says %d entries, file has %d", n, len(lines))}
	}
	return lines, nil
}
