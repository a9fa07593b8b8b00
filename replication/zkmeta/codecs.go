package zkmeta

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrBadData: a znode's data does not decode (wrapped with the details).
var ErrBadData = errors.New("zkmeta: bad znode data")

func badData(what string, err error) error {
	return fmt.Errorf("%w: %s: %v", ErrBadData, what, err)
}

// Endpoint is one advertised listener of a broker.
type Endpoint struct {
	ListenerName     string // e.g. "PLAINTEXT"
	SecurityProtocol string // e.g. "PLAINTEXT"
	Host             string
	Port             int32
}

// ConnectionString is "LISTENER://host:port" as Kafka writes it.
func (e Endpoint) ConnectionString() string {
	return fmt.Sprintf("%s://%s:%d", e.ListenerName, e.Host, e.Port)
}

// BrokerInfo is /brokers/ids/<id> (BrokerIdZNode). Encode writes version 5
// (Kafka 2.7+: v4 plus "features"); Decode reads versions 1–5.
type BrokerInfo struct {
	ID        int32
	Endpoints []Endpoint
	Rack      string // "" = none
	JmxPort   int32  // -1 = none
	Timestamp int64  // registration time, ms since the epoch
}

// BrokerInfoVersion is the version Encode writes.
const BrokerInfoVersion = 5

type brokerJSON struct {
	Version     int               `json:"version"`
	Host        *string           `json:"host"`
	Port        int32             `json:"port"`
	Endpoints   []string          `json:"endpoints"`
	JmxPort     int32             `json:"jmx_port"`
	Timestamp   string            `json:"timestamp"`
	Rack        *string           `json:"rack,omitempty"`
	ListenerMap map[string]string `json:"listener_security_protocol_map,omitempty"`
	Features    map[string]any    `json:"features"`
}

// Encode renders the znode data. host/port are those of the PLAINTEXT
// endpoint (null/-1 without one), for pre-0.10 clients, as Kafka does.
func (b BrokerInfo) Encode() []byte {
	j := brokerJSON{Version: BrokerInfoVersion, Port: -1, JmxPort: b.JmxPort,
		Timestamp: strconv.FormatInt(b.Timestamp, 10), ListenerMap: map[string]string{}, Features: map[string]any{}}
	j.Endpoints = make([]string, 0, len(b.Endpoints))
	for _, e := range b.Endpoints {
		j.Endpoints = append(j.Endpoints, e.ConnectionString())
		j.ListenerMap[e.ListenerName] = e.SecurityProtocol
		if e.SecurityProtocol == "PLAINTEXT" && j.Host == nil {
			h := e.Host
			j.Host, j.Port = &h, e.Port
		}
	}
	if b.Rack != "" {
		r := b.Rack
		j.Rack = &r
	}
	raw, _ := json.Marshal(j)
	return raw
}

// DecodeBrokerInfo parses /brokers/ids/<id> data for broker id.
func DecodeBrokerInfo(id int32, data []byte) (BrokerInfo, error) {
	var j brokerJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return BrokerInfo{}, badData(BrokerPath(id), err)
	}
	b := BrokerInfo{ID: id, JmxPort: j.JmxPort}
	if j.Timestamp != "" {
		b.Timestamp, _ = strconv.ParseInt(j.Timestamp, 10, 64)
	}
	if j.Rack != nil {
		b.Rack = *j.Rack
	}
	for _, s := range j.Endpoints {
		e, err := parseEndpoint(s, j.ListenerMap)
		if err != nil {
			return BrokerInfo{}, badData(BrokerPath(id), err)
		}
		b.Endpoints = append(b.Endpoints, e)
	}
	if len(b.Endpoints) == 0 && j.Host != nil {
		// version 1: host and port only.
		b.Endpoints = []Endpoint{{ListenerName: "PLAINTEXT", SecurityProtocol: "PLAINTEXT", Host: *j.Host, Port: j.Port}}
	}
	return b, nil
}

func parseEndpoint(s string, protoMap map[string]string) (Endpoint, error) {
	name, rest, ok := strings.Cut(s, "://")
	if !ok {
		return Endpoint{}, fmt.Errorf("endpoint %q: no \"://\"", s)
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return Endpoint{}, fmt.Errorf("endpoint %q: no port", s)
	}
	port, err := strconv.ParseInt(rest[i+1:], 10, 32)
	if err != nil {
		return Endpoint{}, fmt.Errorf("endpoint %q: %v", s, err)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(rest[:i], "["), "]")
	proto := name
	if p, ok := protoMap[name]; ok {
		proto = p
	}
	return Endpoint{ListenerName: name, SecurityProtocol: proto, Host: host, Port: int32(port)}, nil
}

// TopicAssignment is /brokers/topics/<topic> (TopicZNode): the replica
// assignment per partition, preferred leader first. Encode writes version 3
// (with topic_id); Decode reads versions 1–3.
type TopicAssignment struct {
	TopicID          [16]byte // zero when the znode predates topic ids (< v3)
	Partitions       map[int32][]int32
	AddingReplicas   map[int32][]int32
	RemovingReplicas map[int32][]int32
}

type topicJSON struct {
	Version          int                `json:"version"`
	TopicID          *string            `json:"topic_id,omitempty"`
	Partitions       map[string][]int32 `json:"partitions"`
	AddingReplicas   map[string][]int32 `json:"adding_replicas"`
	RemovingReplicas map[string][]int32 `json:"removing_replicas"`
}

func toStringKeys(m map[int32][]int32) map[string][]int32 {
	out := make(map[string][]int32, len(m))
	for k, v := range m {
		if v == nil {
			v = []int32{}
		}
		out[itoa(k)] = v
	}
	return out
}

func fromStringKeys(m map[string][]int32) (map[int32][]int32, error) {
	out := make(map[int32][]int32, len(m))
	for k, v := range m {
		p, err := strconv.ParseInt(k, 10, 32)
		if err != nil || p < 0 {
			return nil, fmt.Errorf("partition key %q", k)
		}
		out[int32(p)] = v
	}
	return out, nil
}

// Encode renders the znode data.
func (t TopicAssignment) Encode() []byte {
	j := topicJSON{Version: 3, Partitions: toStringKeys(t.Partitions),
		AddingReplicas: toStringKeys(t.AddingReplicas), RemovingReplicas: toStringKeys(t.RemovingReplicas)}
	if t.TopicID != ([16]byte{}) {
		id := UUIDString(t.TopicID)
		j.TopicID = &id
	} else {
		j.Version = 2
	}
	raw, _ := json.Marshal(j)
	return raw
}

// DecodeTopicAssignment parses /brokers/topics/<topic> data.
func DecodeTopicAssignment(topic string, data []byte) (TopicAssignment, error) {
	var j topicJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return TopicAssignment{}, badData(TopicPath(topic), err)
	}
	var t TopicAssignment
	var err error
	if t.Partitions, err = fromStringKeys(j.Partitions); err != nil {
		return t, badData(TopicPath(topic), err)
	}
	if t.AddingReplicas, err = fromStringKeys(j.AddingReplicas); err != nil {
		return t, badData(TopicPath(topic), err)
	}
	if t.RemovingReplicas, err = fromStringKeys(j.RemovingReplicas); err != nil {
		return t, badData(TopicPath(topic), err)
	}
	if j.TopicID != nil {
		if t.TopicID, err = ParseUUID(*j.TopicID); err != nil {
			return t, badData(TopicPath(topic), err)
		}
	}
	return t, nil
}

// SortedPartitions lists the assignment's partition ids in order.
func (t TopicAssignment) SortedPartitions() []int32 {
	ps := make([]int32, 0, len(t.Partitions))
	for p := range t.Partitions {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// PartitionState is /brokers/topics/<t>/partitions/<p>/state
// (TopicPartitionStateZNode, version 1). It is written conditionally on its
// znode version (the "zkVersion" of LeaderAndIsr).
type PartitionState struct {
	ControllerEpoch int32   `json:"controller_epoch"`
	Leader          int32   `json:"leader"`
	Version         int     `json:"version"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	ISR             []int32 `json:"isr"`
}

// Encode renders the znode data (version 1).
func (s PartitionState) Encode() []byte {
	s.Version = 1
	if s.ISR == nil {
		s.ISR = []int32{}
	}
	raw, _ := json.Marshal(s)
	return raw
}

// DecodePartitionState parses a partition state znode.
func DecodePartitionState(data []byte) (PartitionState, error) {
	var s PartitionState
	if err := json.Unmarshal(data, &s); err != nil {
		return s, badData("partition state", err)
	}
	return s, nil
}

// TopicConfig is /config/topics/<topic> (ConfigEntityZNode): the topic's
// overrides of broker defaults, by Kafka topic config name.
type TopicConfig struct {
	Version int               `json:"version"`
	Config  map[string]string `json:"config"`
}

// EncodeConfig renders a config entity znode ({"version":1,"config":{…}}).
func EncodeConfig(cfg map[string]string) []byte {
	if cfg == nil {
		cfg = map[string]string{}
	}
	raw, _ := json.Marshal(TopicConfig{Version: 1, Config: cfg})
	return raw
}

// DecodeConfig parses a config entity znode; empty data is an empty config.
func DecodeConfig(data []byte) (map[string]string, error) {
	if len(data) == 0 {
		return map[string]string{}, nil
	}
	var c TopicConfig
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, badData("config", err)
	}
	if c.Config == nil {
		c.Config = map[string]string{}
	}
	return c.Config, nil
}

// EncodeConfigChange renders a /config/changes/config_change_<seq>
// notification (version 2), e.g. entityPath "topics/orders".
func EncodeConfigChange(entityPath string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "brokers/<default>" as Kafka writes it, not \u003cdefault\u003e
	_ = enc.Encode(struct {
		Version    int    `json:"version"`
		EntityPath string `json:"entity_path"`
	}{2, entityPath})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// ConfigEntityTopics is the entity type of a topic's config change
// notification: entity_path "topics/<t>" (Kafka's ConfigType.Topic).
const ConfigEntityTopics = "topics"

// DecodeConfigChange parses a /config/changes/config_change_<seq>
// notification and returns its entity path ("topics/orders"). Version 2
// carries entity_path; version 1 (Kafka < 1.1) carries entity_type and
// entity_name, joined here as "<type>/<name>".
func DecodeConfigChange(data []byte) (string, error) {
	var n struct {
		Version    int    `json:"version"`
		EntityPath string `json:"entity_path"`
		EntityType string `json:"entity_type"`
		EntityName string `json:"entity_name"`
	}
	if err := json.Unmarshal(data, &n); err != nil {
		return "", badData("config change notification", err)
	}
	if n.EntityPath == "" && n.EntityType != "" && n.EntityName != "" {
		return n.EntityType + "/" + n.EntityName, nil
	}
	if n.EntityPath == "" {
		return "", badData("config change notification", fmt.Errorf("no entity_path in %q", data))
	}
	return n.EntityPath, nil
}

// ConfigChangeSeq returns the sequence number of a child of
// /config/changes ("config_change_0000000042" → 42); ok is false for any
// other name.
func ConfigChangeSeq(name string) (seq int64, ok bool) {
	const prefix = "config_change_"
	if !strings.HasPrefix(name, prefix) {
		return 0, false
	}
	n, err := strconv.ParseInt(name[len(prefix):], 10, 64)
	return n, err == nil && n >= 0
}

// Controller is /controller (ControllerZNode, version 1).
type Controller struct {
	Version   int    `json:"version"`
	BrokerID  int32  `json:"brokerid"`
	Timestamp string `json:"timestamp"`
}

// EncodeController renders /controller for broker id at time now.
func EncodeController(id int32, now time.Time) []byte {
	raw, _ := json.Marshal(Controller{Version: 1, BrokerID: id, Timestamp: strconv.FormatInt(now.UnixMilli(), 10)})
	return raw
}

// DecodeController returns the controller's broker id. Kafka also accepts
// a bare integer (pre-0.8.2 format).
func DecodeController(data []byte) (int32, error) {
	if n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 32); err == nil {
		return int32(n), nil
	}
	var c Controller
	if err := json.Unmarshal(data, &c); err != nil {
		return -1, badData(ControllerPath, err)
	}
	return c.BrokerID, nil
}

// EncodeControllerEpoch renders /controller_epoch (a decimal integer).
func EncodeControllerEpoch(epoch int32) []byte { return []byte(itoa(epoch)) }

// DecodeControllerEpoch parses /controller_epoch.
func DecodeControllerEpoch(data []byte) (int32, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 32)
	if err != nil {
		return 0, badData(ControllerEpochPath, err)
	}
	return int32(n), nil
}

// EncodeClusterID renders /cluster/id ({"version":"1","id":"…"}).
func EncodeClusterID(id string) []byte {
	raw, _ := json.Marshal(struct {
		Version string `json:"version"`
		ID      string `json:"id"`
	}{"1", id})
	return raw
}

// DecodeClusterID parses /cluster/id.
func DecodeClusterID(data []byte) (string, error) {
	var c struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(data, &c); err != nil || c.ID == "" {
		if err == nil {
			err = errors.New("empty id")
		}
		return "", badData(ClusterIDPath, err)
	}
	return c.ID, nil
}

// UUIDString renders a Kafka Uuid (cluster id, topic id) as Kafka does:
// URL-safe base64 without padding, 22 characters.
func UUIDString(u [16]byte) string { return base64.RawURLEncoding.EncodeToString(u[:]) }

// ParseUUID parses UUIDString's form.
func ParseUUID(s string) ([16]byte, error) {
	var u [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return u, fmt.Errorf("uuid %q: not 22 chars of url-safe base64", s)
	}
	copy(u[:], b)
	return u, nil
}

// ReadController reads /controller through get (a metastore.Store's Get)
// and returns the active controller's broker id: -1 when there is none,
// the read fails or the znode does not decode (for views that only report,
// such as tests and tools; the controller itself tells these cases apart).
func ReadController(get func(path string) ([]byte, int32, error)) int32 {
	data, _, err := get(ControllerPath)
	if err != nil {
		return -1
	}
	id, err := DecodeController(data)
	if err != nil {
		return -1
	}
	return id
}
