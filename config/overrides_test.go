package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --override key=value wins over the file, splits at the first '=' (the
// value keeps the rest), a later override of a key wins, and a bare "key"
// sets "" (Kafka's parseKeyValueArgs).
func TestLoadWithOverrides(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(path, []byte("broker.id=3\nnum.partitions=1\nlog.dirs=/tmp/a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := LoadWithOverrides(path, []string{"num.partitions=2", "num.partitions=5", "log.dirs=/tmp/x=y", "custom.key"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.BrokerID != 3 || b.NumPartitions != 5 || len(b.LogDirs) != 1 || b.LogDirs[0] != "/tmp/x=y" {
		t.Fatalf("broker.id %d num.partitions %d log.dirs %v", b.BrokerID, b.NumPartitions, b.LogDirs)
	}
	if v, ok := b.Raw["custom.key"]; !ok || v != "" {
		t.Fatalf("bare override: %q %v", v, ok)
	}
	_, err = LoadWithOverrides(path, []string{"num.partitions=lots"}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "--override: Invalid value lots for configuration num.partitions") {
		t.Fatalf("bad override: %v", err)
	}
}
