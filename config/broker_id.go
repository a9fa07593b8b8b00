package config

// Broker id generation (Kafka's KafkaServer.getOrGenerateBrokerId): with
// broker.id unset in Kafka, or -1, and broker.id.generation.enable, a
// broker takes the id stored in its log dirs' meta.properties, else a new
// one: reserved.broker.max.id + the version of /brokers/seqid after an
// unconditional write (cmd/internal/broker does it, then meta.properties
// keeps the id across restarts). Gregor's broker.id default stays 0 (a
// single node needs no ZooKeeper sequence); -1 asks for generation.

// IDGeneration are broker.id.generation.enable and reserved.broker.max.id.
type IDGeneration struct {
	// Enable is broker.id.generation.enable (default true).
	Enable bool
	// ReservedMaxID is reserved.broker.max.id (INT >= 0, default 1000):
	// configured ids may go up to it; generated ids start above it.
	ReservedMaxID int32
}

var brokerIDKeys = map[string]brokerKey{
	"broker.id":                   intKey(func(b *Broker) *int32 { return &b.BrokerID }, 32, noMin), // checkBrokerID: -1 or more
	"broker.id.generation.enable": boolKey(func(b *Broker) *bool { return &b.IDGeneration.Enable }),
	"reserved.broker.max.id":      intKey(func(b *Broker) *int32 { return &b.IDGeneration.ReservedMaxID }, 32, 0),
}

func init() {
	for k, v := range brokerIDKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
	}
}

// GenerateID reports whether the broker id is to be taken from
// meta.properties or generated at start (broker.id -1).
func (b *Broker) GenerateID() bool { return b.BrokerID < 0 }

// checkBrokerID is KafkaConfig.validateValues' broker.id rule, with its
// messages.
func checkBrokerID(b *Broker) error {
	id := b.BrokerID
	if b.IDGeneration.Enable {
		if id < -1 || id > b.IDGeneration.ReservedMaxID {
			return invalid("broker.id", i64(int64(id)), "broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id")
		}
		return nil
	}
	if id < 0 {
		return invalid("broker.id", i64(int64(id)), "broker.id must be greater than or equal to 0")
	}
	return nil
}
