package segment

import (
	"fmt"
	"io"

	"gregor/storage/record"
)

// walkChunk is how much of the .log file one header read fetches: small
// batches are walked several per pread, large ones one pread each.
const walkChunk = 8 << 10

// walkHeaders (pinned) calls fn for each batch header in [from, to) in file order,
// with the batch's position; fn returns false to stop. Only the header is
// read (not validated beyond ParseHeader, the magic byte and the batch
// fitting below to): a *record.CorruptError reports a structurally broken
// batch at its position.
func (s *Segment) walkHeaders(from, to int64, fn func(pos int64, h record.Header) bool) error {
	buf := make([]byte, walkChunk)
	var bufPos, bufLen int64 = 0, 0
	pos := from
	lastSize := 0
	for pos < to {
		if pos < bufPos || pos+record.HeaderSize > bufPos+bufLen {
			n := int64(len(buf))
			if lastSize > walkChunk/4 {
				n = record.HeaderSize // big batches: read just the next header
			}
			if to-pos < n {
				n = to - pos
			}
			if n < record.HeaderSize {
				return &record.CorruptError{Reason: fmt.Sprintf("%d trailing bytes at position %d, less than a batch header", n, pos)}
			}
			m, err := s.f.ReadAt(buf[:n], pos)
			if int64(m) < n {
				if err == nil || err == io.EOF {
					err = &record.CorruptError{Reason: fmt.Sprintf("short read at position %d", pos)}
				}
				return err
			}
			bufPos, bufLen = pos, n
		}
		h, err := record.ParseHeader(buf[pos-bufPos : pos-bufPos+record.HeaderSize])
		if err != nil {
			return err
		}
		if h.Magic != 2 {
			return &record.CorruptError{Reason: "unsupported magic byte", Field: "magic", Value: int64(h.Magic)}
		}
		if pos+int64(h.Size()) > to {
			return &record.CorruptError{Reason: fmt.Sprintf("batch at position %d overruns the segment (%d > %d)", pos, pos+int64(h.Size()), to)}
		}
		if !fn(pos, h) {
			return nil
		}
		pos += int64(h.Size())
		lastSize = h.Size()
	}
	return nil
}
