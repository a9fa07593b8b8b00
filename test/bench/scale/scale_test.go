package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOverlayProperties(t *testing.T) {
	base := filepath.Join(t.TempDir(), "server.properties")
	body := "# listeners=PLAINTEXT://commented:1\nbroker.id=0\nlisteners=PLAINTEXT://127.0.0.1:9092\n\nlog.dirs=./data\nnum.partitions=1\n"
	if err := os.WriteFile(base, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := overlayProperties(base, map[string]string{
		"listeners":         "PLAINTEXT://127.0.0.1:4000",
		"log.dirs":          "/d/data",
		"zookeeper.connect": "127.0.0.1:2181/gregor",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "# listeners=PLAINTEXT://commented:1\nbroker.id=0\nlisteners=PLAINTEXT://127.0.0.1:4000\n\nlog.dirs=/d/data\nnum.partitions=1\nzookeeper.connect=127.0.0.1:2181/gregor\n"
	if got != want {
		t.Errorf("overlay:\n%s\nwant:\n%s", got, want)
	}
	if _, err := overlayProperties(filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Error("a missing base file gave no error")
	}
}

func TestLayoutTopics(t *testing.T) {
	got := layout{prefix: "scale", total: 250, perTopic: 100}.topics()
	want := map[string]int32{"scale-0000": 100, "scale-0001": 100, "scale-0002": 50}
	if len(got) != len(want) {
		t.Fatalf("topics %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d partitions, want %d", k, got[k], v)
		}
	}
	var sum int32
	for k, v := range (layout{prefix: "p", total: 20000, perTopic: 100}).topics() {
		if !strings.HasPrefix(k, "p-") {
			t.Errorf("topic %q", k)
		}
		sum += v
	}
	if sum != 20000 {
		t.Errorf("20,000 partitions laid out as %d", sum)
	}
}
