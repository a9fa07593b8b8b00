package compress

import (
	"bytes"
	"testing"
)

// Known XXH32 values (seed 0) from the xxHash reference implementation.
func TestXXH32Vectors(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint32
	}{
		{"", 0x02CC5D05},
		{"a", 0x550D7456},
		{"abc", 0x32D153FF},
		{"Nobody inspects the spammish repetition", 0xE2293B2F},
	} {
		if got := xxh32([]byte(c.in), 0); got != c.want {
			t.Errorf("xxh32(%q) = %#x, want %#x", c.in, got, c.want)
		}
	}
}

// The checksum Encode writes is the standard one; breaking it gives a
// different byte that the standard decoder refuses, and fixing restores it.
func TestLegacyLZ4Checksum(t *testing.T) {
	src := bytes.Repeat([]byte("legacy lz4 "), 100)
	frame, err := Encode(LZ4, nil, src)
	if err != nil {
		t.Fatal(err)
	}
	end, err := lz4DescriptorEnd(frame)
	if err != nil {
		t.Fatal(err)
	}
	good := frame[end]
	if want := byte(xxh32(frame[4:end], 0) >> 8); good != want {
		t.Fatalf("encoder HC %#x, xxh32 gives %#x", good, want)
	}
	broken := append([]byte(nil), frame...)
	if err := BreakLegacyLZ4Checksum(broken); err != nil {
		t.Fatal(err)
	}
	if broken[end] == good {
		t.Fatalf("broken HC equals the correct one (%#x): choose another input", good)
	}
	if _, err := Decode(LZ4, broken, 1<<20); err == nil {
		t.Fatal("standard decoder accepted the broken checksum")
	}
	fixed, err := FixLegacyLZ4Checksum(broken)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(LZ4, fixed, 1<<20)
	if err != nil || !bytes.Equal(out, src) {
		t.Fatalf("decode fixed: %v (equal %v)", err, bytes.Equal(out, src))
	}
	if _, err := FixLegacyLZ4Checksum([]byte("not lz4 at all")); err == nil {
		t.Fatal("non-lz4 input accepted")
	}
}
