package zkmeta

import (
	"errors"
	"reflect"
	"testing"
)

func TestLogDirEventRoundTripAndKafkaForm(t *testing.T) {
	parts := []IsrChangePartition{{Topic: "t", Partition: 2}}
	raw := EncodeLogDirEvent(3, parts)
	want := `{"version":1,"broker":3,"event":1,"partitions":[{"topic":"t","partition":2}]}`
	if string(raw) != want {
		t.Fatalf("encoded %s, want %s", raw, want)
	}
	ev, err := DecodeLogDirEvent(raw)
	if err != nil || ev.Broker != 3 || ev.Event != LogDirFailureEvent || !reflect.DeepEqual(ev.Partitions, parts) {
		t.Fatalf("decoded %+v, %v", ev, err)
	}
	// What a Kafka broker writes: no partitions.
	ev, err = DecodeLogDirEvent([]byte(`{"version":1,"broker":7,"event":1}`))
	if err != nil || ev.Broker != 7 || len(ev.Partitions) != 0 {
		t.Fatalf("Kafka form decoded %+v, %v", ev, err)
	}
	for _, bad := range []string{`{"version":1,"event":1}`, `nope`, `{"broker":"x"}`} {
		if _, err := DecodeLogDirEvent([]byte(bad)); !errors.Is(err, ErrBadData) {
			t.Errorf("%s: err %v, want ErrBadData", bad, err)
		}
	}
	if LogDirEventPrefix != "/log_dir_event_notification/log_dir_event_" {
		t.Fatalf("prefix %q", LogDirEventPrefix)
	}
}
