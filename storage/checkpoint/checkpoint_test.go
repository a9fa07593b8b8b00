package checkpoint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestOffsetsRoundTripAndFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecoveryPointFile)
	in := []Entry{{"orders", 1, 42}, {"a-b", 0, 7}, {"orders", 0, 9}}
	if err := WriteOffsets(path, in); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := "0\n3\na-b 0 7\norders 0 9\norders 1 42\n"
	if string(data) != want {
		t.Fatalf("file = %q, want %q", data, want)
	}
	got, err := ReadOffsets(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []Entry{{"a-b", 0, 7}, {"orders", 0, 9}, {"orders", 1, 42}}) {
		t.Fatalf("got %v", got)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("temp file left behind: %v", err)
	}
}

func TestOffsetsBadInput(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadOffsets(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
	for name, content := range map[string]string{
		"version": "1\n0\n",
		"count":   "0\n2\nt 0 1\n",
		"fields":  "0\n1\nt 0\n",
		"number":  "0\n1\nt x 1\n",
		"empty":   "",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		var fe *FormatError
		if _, err := ReadOffsets(p); !errors.As(err, &fe) {
			t.Errorf("%s: err = %v, want *FormatError", name, err)
		}
	}
}

func TestEpochsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), LeaderEpochFile)
	in := []EpochEntry{{0, 0}, {3, 120}, {4, 500}}
	if err := WriteEpochs(path, in); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "0\n3\n0 0\n3 120\n4 500\n" {
		t.Fatalf("file = %q", data)
	}
	got, err := ReadEpochs(path)
	if err != nil || !reflect.DeepEqual(got, in) {
		t.Fatalf("got %v, %v", got, err)
	}
}

func TestPartitionMetadata(t *testing.T) {
	dir := t.TempDir()
	id := [16]byte{0xfb, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0xff}
	if err := WritePartitionMetadata(dir, id); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, PartitionMetadataFile))
	if string(data) != "version: 0\ntopic_id: -wECAwQFBgcICQoLDA0O_w\n" {
		t.Fatalf("file = %q", data)
	}
	got, err := ReadPartitionMetadata(dir)
	if err != nil || got != id {
		t.Fatalf("got %x, %v", got, err)
	}
}

func TestMetaProperties(t *testing.T) {
	dir := t.TempDir()
	m := MetaProperties{Version: 0, BrokerID: 3, ClusterID: "Cv5UYCvXSt2cfgpWJYPWeA"}
	if err := WriteMetaProperties(dir, m); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMetaProperties(dir)
	if err != nil || got != m {
		t.Fatalf("got %+v, %v", got, err)
	}
	// A file written by Kafka itself (Java properties with a date comment).
	os.WriteFile(filepath.Join(dir, MetaPropertiesFile), []byte("#\n#Tue Sep 10 10:00:00 UTC 2024\ncluster.id=abc\nversion=0\nbroker.id=7\n"), 0o644)
	got, err = ReadMetaProperties(dir)
	if err != nil || got != (MetaProperties{0, 7, "abc"}) {
		t.Fatalf("kafka file: %+v, %v", got, err)
	}
	os.WriteFile(filepath.Join(dir, MetaPropertiesFile), []byte("version=0\n"), 0o644)
	var fe *FormatError
	if _, err := ReadMetaProperties(dir); !errors.As(err, &fe) {
		t.Fatalf("missing broker.id: %v", err)
	}
}
