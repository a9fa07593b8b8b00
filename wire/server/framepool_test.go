package server

import "testing"

func TestFrameClasses(t *testing.T) {
	for _, tc := range []struct{ size, class int }{
		{0, -1}, {1, -1}, {2048, -1}, {2049, 0}, {4095, 0}, {4096, 0}, {4097, 1}, {1 << 20, 20 - minFrameClass},
		{1<<20 + 1, 21 - minFrameClass}, {1 << maxFrameClass, maxFrameClass - minFrameClass}, {1<<maxFrameClass + 1, -1},
	} {
		if got := frameClass(tc.size); got != tc.class {
			t.Errorf("frameClass(%d) = %d, want %d", tc.size, got, tc.class)
		}
	}
}

func TestGetPutFrame(t *testing.T) {
	b, h := getFrame(100)
	if len(b) != 100 || h != nil {
		t.Fatalf("small frame: len %d handle %v", len(b), h)
	}
	putFrame(h) // nil: no-op
	b, h = getFrame(300 << 10)
	if len(b) != 300<<10 || h == nil || cap(*h) != 512<<10 || &(*h)[0] != &b[0] {
		t.Fatalf("pooled frame: len %d cap %d", len(b), cap(b))
	}
	putFrame(h)
	b, h = getFrame(400 << 10) // same class; may or may not be the same buffer
	if len(b) != 400<<10 || h == nil || cap(*h) != 512<<10 {
		t.Fatalf("second frame: len %d", len(b))
	}
	b, h = getFrame(16 << 20)
	if len(b) != 16<<20 || h != nil {
		t.Fatalf("huge frame: len %d handle %v", len(b), h)
	}
}
