package admin

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestParseErrorCodeNames: Kafka's current names, its older names and
// kerr's names all resolve to the code Kafka's protocol gives them; codes
// parse as numbers; unknown names, unknown codes, zero and out-of-range
// numbers are refused with an error naming the input.
func TestParseErrorCodeNames(t *testing.T) {
	ok := map[string]int16{
		"NOT_LEADER_OR_FOLLOWER":          6, // Kafka's name since 2.x; kerr spells it NOT_LEADER_FOR_PARTITION
		"not_leader_or_follower":          6,
		"NOT_LEADER_FOR_PARTITION":        6,
		"6":                               6,
		" 19 ":                            19,
		"NOT_ENOUGH_REPLICAS":             19,
		"KAFKA_STORAGE_ERROR":             56,
		"UNKNOWN_SERVER_ERROR":            -1,
		"-1":                              -1,
		"GROUP_COORDINATOR_NOT_AVAILABLE": 15,
		"COORDINATOR_NOT_AVAILABLE":       15,
		"NOT_COORDINATOR_FOR_GROUP":       16,
		"MESSAGE_SIZE_TOO_LARGE":          10,
		"FENCED_LEADER_EPOCH":             74,
		"REQUEST_TIMED_OUT":               7,
	}
	for in, want := range ok {
		got, err := parseErrorCode(in)
		if err != nil || got != want {
			t.Errorf("parseErrorCode(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "NONE_SUCH", "NOT_LEADER", "32768", "-2", "9999", "UNKNOWN_SERVER"} {
		if c, err := parseErrorCode(in); err == nil {
			t.Errorf("parseErrorCode(%q) = %d, want an error", in, c)
		} else if in != "" && !strings.Contains(err.Error(), strings.TrimSpace(in)) {
			t.Errorf("parseErrorCode(%q) error %q does not name the input", in, err)
		}
	}
}

// TestFaultEndpointAcceptsKafkaNames arms request faults through the real
// admin listener with the names `gregor admin fault error --error …` sends:
// NOT_LEADER_OR_FOLLOWER used to be a 400 "unknown Kafka error".
func TestFaultEndpointAcceptsKafkaNames(t *testing.T) {
	s, err := Start(Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := &Client{URL: s.Addr().String()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, name := range []string{"NOT_LEADER_OR_FOLLOWER", "NOT_LEADER_FOR_PARTITION", "6"} {
		resp, err := c.Fault(ctx, FaultRequest{Request: "Produce", Action: RequestError, Error: name, Count: 1})
		if err != nil {
			t.Fatalf("fault error %s: %v", name, err)
		}
		if resp.Request == nil || resp.Request.ErrorCode != 6 || resp.Request.Key != 0 {
			t.Fatalf("fault error %s armed %+v, want Produce with code 6", name, resp.Request)
		}
	}
	_, err = c.Fault(ctx, FaultRequest{Request: "Produce", Action: RequestError, Error: "NOT_A_KAFKA_ERROR"})
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "NOT_A_KAFKA_ERROR") {
		t.Fatalf("unknown name: err = %v, want a 400 naming it", err)
	}
}
