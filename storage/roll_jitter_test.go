package storage

import "testing"

// segment.jitter.ms: each segment rolls at segment.ms minus its own draw
// in [0, min(segment.jitter.ms, segment.ms)). With batches 1 s apart and
// segment.ms 5 s, a draw of 2 s rolls after 3 s (batches 0..3, then a new
// segment at 4) where no jitter rolls after 5 s (at 6, TestRollRules); the
// draw's bound is the smaller of the two settings.
func TestSegmentJitter(t *testing.T) {
	var bounds []int64
	old := jitterDraw
	jitterDraw = func(n int64) int64 { bounds = append(bounds, n); return 2000 }
	t.Cleanup(func() { jitterDraw = old })

	cfg := testConfig()
	cfg.SegmentMs = 5000
	cfg.SegmentJitterMs = 60000
	l := newTestLog(t, cfg)
	appendN(t, l, 12, 1, 10, 1_000_000)
	segs := l.segs.Load().segs
	if len(segs) < 2 || segs[1].BaseOffset() != 4 {
		t.Fatalf("second segment base %d (of %d segments), want 4", segs[1].BaseOffset(), len(segs))
	}
	for _, n := range bounds {
		if n != 5000 {
			t.Fatalf("jitter drawn in [0, %d), want [0, min(60000, 5000))", n)
		}
	}
	if len(bounds) < 2 {
		t.Fatalf("%d draws, want one at open and one per roll", len(bounds))
	}

	bounds = nil
	cfg.SegmentJitterMs = 0
	l = newTestLog(t, cfg)
	appendN(t, l, 12, 1, 10, 1_000_000)
	if len(bounds) != 0 || l.segs.Load().segs[1].BaseOffset() != 6 {
		t.Fatalf("segment.jitter.ms=0: %d draws, second segment at %d, want none and 6", len(bounds), l.segs.Load().segs[1].BaseOffset())
	}
}
