package zkmeta

import (
	"errors"
	"testing"
)

func TestConfigChangeCodec(t *testing.T) {
	data := EncodeConfigChange(ConfigEntityTopics + "/orders")
	if string(data) != `{"version":2,"entity_path":"topics/orders"}` {
		t.Fatalf("encoded %s", data)
	}
	for _, c := range []struct{ in, want string }{
		{string(data), "topics/orders"},
		{`{"version":1,"entity_type":"topics","entity_name":"old"}`, "topics/old"}, // Kafka < 1.1
	} {
		if got, err := DecodeConfigChange([]byte(c.in)); err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{``, `{`, `{"version":2}`} {
		if _, err := DecodeConfigChange([]byte(bad)); !errors.Is(err, ErrBadData) {
			t.Errorf("%q: %v, want ErrBadData", bad, err)
		}
	}
}

func TestConfigChangeSeq(t *testing.T) {
	for name, want := range map[string]int64{"config_change_0000000042": 42, "config_change_0000000000": 0} {
		if got, ok := ConfigChangeSeq(name); !ok || got != want {
			t.Errorf("%s: %d %v", name, got, ok)
		}
	}
	for _, name := range []string{"isr_change_0000000001", "config_change_", "config_change_x1", "config_change_-1"} {
		if _, ok := ConfigChangeSeq(name); ok {
			t.Errorf("%s accepted", name)
		}
	}
}
