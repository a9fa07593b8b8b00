package config

// requestKeys are limits on what one request may ask, added to brokerKeys
// by init.
var requestKeys = map[string]brokerKey{
	"max.request.partition.size.limit": intKey(func(b *Broker) *int32 { return &b.MaxRequestPartitionSizeLimit }, 32, 1),
}

// defaultMaxRequestPartitionSizeLimit is max.request.partition.size.limit's
// Kafka default.
const defaultMaxRequestPartitionSizeLimit = 2000

func init() {
	for k, v := range requestKeys {
		brokerKeys[k] = v
	}
}
