package record

import (
	"errors"
	"testing"
)

func TestEndTxnMarkerRoundTrip(t *testing.T) {
	for _, commit := range []bool{false, true} {
		r := EndTxnMarker(commit, 77)
		v, typ, err := ControlKey(r.Key)
		if err != nil || v != 0 || (typ == ControlCommit) != commit || (typ == ControlAbort) == commit {
			t.Fatalf("commit=%v: key version %d type %d err %v", commit, v, typ, err)
		}
		if e, err := EndTxnMarkerValue(r.Value); err != nil || e != 77 {
			t.Fatalf("commit=%v: coordinator epoch %d err %v, want 77", commit, e, err)
		}
	}
	if _, _, err := ControlKey([]byte{0, 0, 1}); !errors.Is(err, ErrBadControlRecord) {
		t.Fatalf("short key: %v", err)
	}
	if _, err := EndTxnMarkerValue([]byte{0, 0, 0, 0, 1}); !errors.Is(err, ErrBadControlRecord) {
		t.Fatalf("short value: %v", err)
	}
}
