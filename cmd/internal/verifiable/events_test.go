package verifiable

import "testing"

// Java's Double.toString, as Jackson writes avg_throughput.
func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0.0", 5: "5.0", 4.051863857374392: "4.051863857374392", 1234.5: "1234.5",
		1e7: "1.0E7", 12345678.9: "1.23456789E7", 0.001: "0.001", 0.0001: "1.0E-4", -2.5: "-2.5",
	} {
		if got := JavaDouble(f); got != want {
			t.Errorf("%v: %s, want %s", f, got, want)
		}
	}
}
