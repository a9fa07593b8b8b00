package topicconfig

import (
	"errors"
	"sort"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestKeysSortedAndComplete(t *testing.T) {
	if !sort.SliceIsSorted(Keys, func(i, j int) bool { return Keys[i].Name < Keys[j].Name }) {
		t.Fatal("Keys not sorted by name")
	}
	for _, k := range Keys {
		if k.validate == nil || len(k.Synonyms) == 0 || k.Doc == "" {
			t.Errorf("%s incomplete", k.Name)
		}
		if err := k.validate(k.Default); err != nil {
			t.Errorf("%s: default %q invalid: %v", k.Name, k.Default, err)
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		in      map[string]string
		wantErr string
	}{
		{map[string]string{"retention.ms": "-1", "cleanup.policy": "compact,delete"}, ""},
		{map[string]string{"retention.ms": "-2"}, "Invalid value -2 for configuration retention.ms: Value must be at least -1"},
		{map[string]string{"segment.bytes": "13"}, "Invalid value 13 for configuration segment.bytes: Value must be at least 14"},
		{map[string]string{"segment.bytes": "4294967296"}, "Invalid value 4294967296 for configuration segment.bytes: Expected value to be a 32-bit integer"},
		{map[string]string{"cleanup.policy": "forever"}, "Invalid value forever for configuration cleanup.policy: String must be one of: compact, delete"},
		{map[string]string{"no.such.config": "1"}, "Unknown topic config name: no.such.config"},
		{map[string]string{"min.cleanable.dirty.ratio": "1.5"}, "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be between 0 and 1"},
	}
	for _, c := range cases {
		err := Validate(c.in)
		if c.wantErr == "" {
			if err != nil {
				t.Errorf("%v: %v", c.in, err)
			}
			continue
		}
		var ie *InvalidError
		if !errors.As(err, &ie) || err.Error() != c.wantErr {
			t.Errorf("%v: got %v, want %q", c.in, err, c.wantErr)
		}
	}
}

func TestResolveSourcesAndSynonyms(t *testing.T) {
	broker := map[string]string{"log.retention.hours": "24", "log.segment.bytes": "1048576"}
	vals := Resolve(map[string]string{"segment.bytes": "2048"}, broker)
	get := func(name string) Value {
		for _, v := range vals {
			if v.Key.Name == name {
				return v
			}
		}
		t.Fatalf("%s missing", name)
		return Value{}
	}
	r := get("retention.ms")
	if r.Value != "86400000" || r.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("retention.ms = %+v", r)
	}
	if len(r.Synonyms) != 2 || r.Synonyms[0].Name != "log.retention.hours" || r.Synonyms[0].Value != "24" ||
		r.Synonyms[1].Name != "log.retention.ms" || r.Synonyms[1].Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("retention.ms synonyms %+v", r.Synonyms)
	}
	s := get("segment.bytes")
	if s.Value != "2048" || s.Source != kmsg.ConfigSourceDynamicTopicConfig || len(s.Synonyms) != 3 {
		t.Fatalf("segment.bytes = %+v", s)
	}
	if c := get("cleanup.policy"); c.Value != "delete" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("cleanup.policy = %+v", c)
	}

	lc := LogConfig(map[string]string{"segment.bytes": "2048", "cleanup.policy": "compact"}, broker)
	if lc.SegmentBytes != 2048 || lc.RetentionMs != 86400000 || !lc.Compact || lc.MaxMessageBytes != 1048588 {
		t.Fatalf("LogConfig %+v", lc)
	}
}
