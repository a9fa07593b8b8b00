package config

import (
	"errors"
	"reflect"
	"testing"
)

func TestValidateThrottledReplicas(t *testing.T) {
	for _, v := range []string{"", "*", " * ", "0:1", "0:1,1:2", "0:1 , 1:2", "0:1,,1:2", "10:100"} {
		if err := ValidateThrottledReplicas(LeaderThrottledReplicasKey, v); err != nil {
			t.Errorf("%q refused: %v", v, err)
		}
	}
	for _, v := range []string{"x", "0", "0:", ":1", "0:1,*", "0:1;1:2", "-1:2", "a:b", "0:1:2", "**"} {
		if err := ValidateThrottledReplicas(LeaderThrottledReplicasKey, v); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
	err := ValidateThrottledReplicas(FollowerThrottledReplicasKey, "0:1, x")
	want := "Invalid value [0:1, x] for configuration follower.replication.throttled.replicas: follower.replication.throttled.replicas must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."
	var ve *ValueError
	if !errors.As(err, &ve) || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
	// The topic config table uses it: CreateTopics/AlterConfigs refuse.
	if err := ValidateTopicConfigs(map[string]string{LeaderThrottledReplicasKey: "1-2"}); err == nil {
		t.Fatal("ValidateTopicConfigs accepted a malformed throttled replicas list")
	}
}

func TestParseThrottledReplicas(t *testing.T) {
	cases := []struct {
		v     string
		id    int32
		all   bool
		parts []int32
	}{
		{"*", 1, true, nil},
		{"", 1, false, nil},
		{"0:1,1:2,2:1", 1, false, []int32{0, 2}},
		{"0:1,1:2,2:1", 2, false, []int32{1}},
		{"0:1,1:2,2:1", 3, false, nil},
		{" 4:3 ,,5:3", 3, false, []int32{4, 5}},
	}
	for _, c := range cases {
		all, parts, err := ParseThrottledReplicas(LeaderThrottledReplicasKey, c.v, c.id)
		if err != nil || all != c.all || !reflect.DeepEqual(parts, c.parts) {
			t.Errorf("Parse(%q, broker %d) = %v %v %v, want %v %v", c.v, c.id, all, parts, err, c.all, c.parts)
		}
	}
	if _, _, err := ParseThrottledReplicas(LeaderThrottledReplicasKey, "0:x", 1); err == nil {
		t.Error("malformed value parsed")
	}
}
