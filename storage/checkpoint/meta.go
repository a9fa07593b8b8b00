package checkpoint

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// File names of the per-partition and per-log-dir metadata files.
const (
	PartitionMetadataFile = "partition.metadata" // topic id of the partition (KIP-516)
	MetaPropertiesFile    = "meta.properties"    // broker.id and cluster.id of a log dir
)

// EncodeUUID renders a Kafka Uuid as Kafka prints it: URL-safe base64
// without padding (22 characters).
func EncodeUUID(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// DecodeUUID parses EncodeUUID's form.
func DecodeUUID(s string) ([16]byte, error) {
	var id [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, fmt.Errorf("bad uuid %q", s)
	}
	copy(id[:], b)
	return id, nil
}

// WritePartitionMetadata atomically writes <dir>/partition.metadata:
// "version: 0\ntopic_id: <uuid>\n" (Kafka's PartitionMetadataFile).
func WritePartitionMetadata(dir string, topicID [16]byte) error {
	data := fmt.Sprintf("version: 0\ntopic_id: %s\n", EncodeUUID(topicID))
	return WriteFileAtomic(filepath.Join(dir, PartitionMetadataFile), []byte(data))
}

// ReadPartitionMetadata reads <dir>/partition.metadata. A missing file gives
// an error for which errors.Is(err, fs.ErrNotExist) holds; bad content a
// *FormatError.
func ReadPartitionMetadata(dir string) ([16]byte, error) {
	path := filepath.Join(dir, PartitionMetadataFile)
	var id [16]byte
	data, err := os.ReadFile(path)
	if err != nil {
		return id, err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) != 2 || strings.TrimSpace(lines[0]) != "version: 0" {
		return id, &FormatError{Path: path, Reason: "want \"version: 0\" and \"topic_id: <uuid>\" lines"}
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(lines[1]), "topic_id: ")
	if !ok {
		return id, &FormatError{Path: path, Line: 2, Reason: "missing topic_id"}
	}
	id, err = DecodeUUID(v)
	if err != nil {
		return id, &FormatError{Path: path, Line: 2, Reason: err.Error()}
	}
	return id, nil
}

// MetaProperties is a log dir's meta.properties (ZooKeeper-mode, version 0):
// which broker and cluster the directory belongs to. Plain value.
type MetaProperties struct {
	Version   int    // "version"; 0 for ZooKeeper-mode dirs
	BrokerID  int32  // "broker.id"
	ClusterID string // "cluster.id"; empty when unknown
}

// WriteMetaProperties atomically writes <dir>/meta.properties in Java
// properties syntax (version=, broker.id=, cluster.id=).
func WriteMetaProperties(dir string, m MetaProperties) error {
	var b bytes.Buffer
	b.WriteString("#\n#Written by gregor\n")
	if m.ClusterID != "" {
		fmt.Fprintf(&b, "cluster.id=%s\n", m.ClusterID)
	}
	fmt.Fprintf(&b, "version=%d\nbroker.id=%d\n", m.Version, m.BrokerID)
	return WriteFileAtomic(filepath.Join(dir, MetaPropertiesFile), b.Bytes())
}

// ReadMetaProperties reads <dir>/meta.properties. A missing file gives an
// error for which errors.Is(err, fs.ErrNotExist) holds; a missing or bad
// version/broker.id a *FormatError. Unknown keys are ignored.
func ReadMetaProperties(dir string) (MetaProperties, error) {
	path := filepath.Join(dir, MetaPropertiesFile)
	var m MetaProperties
	data, err := os.ReadFile(path)
	if err != nil {
		return m, err
	}
	kv := map[string]string{}
	for _, ln := range strings.Split(string(data), "\n") {
		ln = strings.TrimSpace(ln)
		if ln == "" || ln[0] == '#' || ln[0] == '!' {
			continue
		}
		i := strings.IndexAny(ln, "=:")
		if i < 0 {
			continue
		}
		kv[strings.TrimSpace(ln[:i])] = strings.TrimSpace(ln[i+1:])
	}
	v, err := strconv.Atoi(kv["version"])
	if err != nil {
		return m, &FormatError{Path: path, Reason: fmt.Sprintf("bad or missing version %q", kv["version"])}
	}
	id, err := strconv.ParseInt(kv["broker.id"], 10, 32)
	if err != nil {
		return m, &FormatError{Path: path, Reason: fmt.Sprintf("bad or missing broker.id %q", kv["broker.id"])}
	}
	return MetaProperties{Version: v, BrokerID: int32(id), ClusterID: kv["cluster.id"]}, nil
}
