package clientutil

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/wire/security/clientsec"
)

// Options is the result of mapping Kafka client properties to kgo options.
type Options struct {
	Opts []kgo.Opt
	// Group is group.id ("" = none).
	Group string
	// MaxRequestSize is max.request.size in bytes when given (0 = kgo's
	// default batch limit, 1,000,012 bytes); producers only.
	MaxRequestSize int32
	// TransactionalID is the producer's transactional.id ("" = not
	// transactional); producers only. The caller adds kgo.TransactionalID
	// (the perf tool may override it with --transactional-id).
	TransactionalID string
	// Ignored lists property names that were accepted but have no kgo
	// counterpart (serializers, buffer sizes…) or are unknown, sorted; the
	// tools print a warning for each, as Kafka's clients log "supplied but
	// isn't a known config".
	Ignored []string
	// Unused lists security keys that were given but that
	// security.protocol does not use (ssl.* on PLAINTEXT, sasl.* without
	// SASL), sorted; the tools warn as Kafka logs "supplied but are not
	// used yet".
	Unused []string
	// Security is the client's security (security.protocol, sasl.*,
	// ssl.*), already in Opts; a tool that makes further clients (or raw
	// connections) from the same properties adds Security.Opts() to them.
	Security clientsec.Client
}

// newOptions starts Options with the security properties applied: bad
// security values fail here, before any connection.
func newOptions(props map[string]string, opts ...kgo.Opt) (Options, error) {
	sec, unused, err := Security(props)
	if err != nil {
		return Options{}, err
	}
	return Options{Opts: append(opts, sec.Opts()...), Security: sec, Unused: unused}, nil
}

// Warn prints one warning line on w per ignored or unused property, as
// Kafka's clients log them (names only, never values).
func (o Options) Warn(w io.Writer) {
	for _, k := range o.Ignored {
		fmt.Fprintf(w, "WARN The configuration '%s' was supplied but isn't a known config.\n", k)
	}
	for _, k := range o.Unused {
		fmt.Fprintf(w, "WARN The configuration '%s' was supplied but isn't used with this security.protocol.\n", k)
	}
}

func propInt(k, v string, min int64) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid value %s for configuration %s: not a number", v, k)
	}
	if n < min {
		return 0, fmt.Errorf("invalid value %s for configuration %s: value must be at least %d", v, k, min)
	}
	return n, nil
}

func propBool(k, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("invalid value %s for configuration %s: expected true or false", v, k)
}

func msDur(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// Codec maps a Kafka compression name (compression.type,
// --compression-codec) to a kgo codec: none, gzip, snappy, lz4, zstd.
func Codec(name string) (kgo.CompressionCodec, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "none", "uncompressed", "":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("invalid compression codec %q: expected none, gzip, snappy, lz4 or zstd", name)
}

// common handles properties every client has; it reports whether k was handled.
func common(o *Options, k, v string) (bool, error) {
	switch k {
	case "client.id":
		o.Opts = append(o.Opts, kgo.ClientID(v))
	case "bootstrap.servers":
		// The --bootstrap-server flag decides; Kafka's tools do the same.
	case "request.timeout.ms":
		n, err := propInt(k, v, 0)
		if err != nil {
			return true, err
		}
		o.Opts = append(o.Opts, kgo.ProduceRequestTimeout(max(msDur(n), 100*time.Millisecond)))
	case "metadata.max.age.ms":
		n, err := propInt(k, v, 0)
		if err != nil {
			return true, err
		}
		o.Opts = append(o.Opts, kgo.MetadataMaxAge(min(max(msDur(n), 10*time.Millisecond), time.Hour)))
	case "retry.backoff.ms":
		n, err := propInt(k, v, 0)
		if err != nil {
			return true, err
		}
		o.Opts = append(o.Opts, kgo.RetryBackoffFn(func(int) time.Duration { return msDur(n) }))
	case "socket.connection.setup.timeout.ms":
		n, err := propInt(k, v, 0)
		if err != nil {
			return true, err
		}
		o.Opts = append(o.Opts, kgo.DialTimeout(msDur(n)))
	default:
		// The security keys were applied by newOptions.
		return isSecurityKey(k), nil
	}
	return true, nil
}

// ProducerOptions maps Kafka producer properties to kgo options: acks
// (all/-1, 1, 0), linger.ms, batch.size (validated; a batching target kgo
// has no knob for, never a record size limit), max.request.size (the
// largest record batch, hence record, at least 512 bytes), compression.type, client.id, retries, delivery.timeout.ms,
// request.timeout.ms, enable.idempotence, max.in.flight.requests.per.connection,
// buffer.memory, retry.backoff.ms, metadata.max.age.ms, transactional.id
// (returned in Options.TransactionalID), transaction.timeout.ms. As in Kafka ≥ 3,
// idempotence is on by default and turned off when acks is not all, unless
// enable.idempotence=true was asked for, which is then an error. The
// security keys (security.protocol, sasl.*, ssl.*) are applied by Security.
func ProducerOptions(props map[string]string) (Options, error) {
	// compression.type defaults to none in Kafka's producer; kgo's own
	// default is snappy. A compression.type property appends its codec
	// after this one, and kgo keeps the last.
	o, err := newOptions(props, kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return o, err
	}
	acks := "-1"
	idem, idemSet := true, false
	for _, k := range slices.Sorted(maps.Keys(props)) {
		v := strings.TrimSpace(props[k])
		if ok, err := common(&o, k, v); err != nil {
			return o, err
		} else if ok {
			continue
		}
		switch k {
		case "acks", "request.required.acks":
			switch strings.ToLower(v) {
			case "all", "-1":
				acks = "-1"
			case "0", "1":
				acks = v
			default:
				return o, fmt.Errorf("invalid value %s for configuration %s: expected all, -1, 0 or 1", v, k)
			}
		case "enable.idempotence":
			b, err := propBool(k, v)
			if err != nil {
				return o, err
			}
			idem, idemSet = b, true
		case "linger.ms":
			n, err := propInt(k, v, 0)
			if err != nil {
				return o, err
			}
			o.Opts = append(o.Opts, kgo.ProducerLinger(min(msDur(n), time.Minute)))
		case "batch.size":
			// Kafka's batch.size is a batching target: a batch is closed
			// once it holds this many bytes, but a single larger record
			// still goes out in a batch of its own. kgo only has a hard
			// per-batch maximum, which must not turn this target into a
			// record size limit (max.request.size is that limit), so
			// batching is left to linger.ms and max.request.size.
			if _, err := propInt(k, v, 0); err != nil {
				return o, err
			}
		case "max.request.size":
			// The largest request, hence the largest record batch, the
			// producer sends; a larger record fails client-side
			// (RecordTooLargeException / MESSAGE_TOO_LARGE).
			n, err := propInt(k, v, 512)
			if err != nil {
				return o, err
			}
			n = min(n, 1<<30)
			o.MaxRequestSize = int32(n)
			o.Opts = append(o.Opts, kgo.ProducerBatchMaxBytes(int32(n)))
			if n > 100<<20 { // kgo's write limit (default 100 MiB) must cover one batch
				o.Opts = append(o.Opts, kgo.BrokerMaxWriteBytes(int32(n)))
			}
		case "compression.type":
			c, err := Codec(v)
			if err != nil {
				return o, err
			}
			o.Opts = append(o.Opts, kgo.ProducerBatchCompression(c))
		case "retries":
			n, err := propInt(k, v, 0)
			if err != nil {
				return o, err
			}
			o.Opts = append(o.Opts, kgo.RecordRetries(int(min(n, 1<<31-1))))
		case "delivery.timeout.ms":
			n, err := propInt(k, v, 0)
			if err != nil {
				return o, err
			}
			o.Opts = append(o.Opts, kgo.RecordDeliveryTimeout(max(msDur(n), time.Second)))
		case "max.in.flight.requests.per.connection":
			n, err := propInt(k, v, 1)
			if err != nil {
				return o, err
			}
			o.Opts = append(o.Opts, kgo.MaxProduceRequestsInflightPerBroker(int(min(n, 1<<20))))
		case "buffer.memory":
			n, err := propInt(k, v, 0)
			if err != nil {
				return o, err
			}
			o.Opts = append(o.Opts, kgo.MaxBufferedBytes(int(n)))
		case "transactional.id":
			o.TransactionalID = v
		case "transaction.timeout.ms":
			n, err := propInt(k, v, 1)
			if err != nil {
				return o, err
			}
			o.Opts = append(o.Opts, kgo.TransactionTimeout(msDur(min(n, int64(24*time.Hour/time.Millisecond)))))
		default:
			o.Ignored = append(o.Ignored, k)
		}
	}
	if o.TransactionalID != "" && (acks != "-1" || (idemSet && !idem)) {
		// Kafka's ProducerConfig: a transactional producer must be
		// idempotent, and idempotence needs acks=all.
		return o, fmt.Errorf("Cannot set a transactional.id without also enabling idempotence (acks=all, enable.idempotence=true).")
	}
	switch acks {
	case "-1":
		o.Opts = append(o.Opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1":
		o.Opts = append(o.Opts, kgo.RequiredAcks(kgo.LeaderAck()))
	case "0":
		o.Opts = append(o.Opts, kgo.RequiredAcks(kgo.NoAck()))
	}
	if acks != "-1" {
		if idemSet && idem {
			return o, fmt.Errorf("enable.idempotence=true requires acks=all (got acks=%s)", acks)
		}
		idem = false
	}
	if !idem {
		o.Opts = append(o.Opts, kgo.DisableIdempotentWrite())
	}
	return o, nil
}

// ConsumerOptions maps Kafka consumer properties to kgo options: group.id,
// auto.offset.reset (earliest, latest, none), fetch.min.bytes,
// fetch.max.bytes, fetch.max.wait.ms, max.partition.fetch.bytes,
// isolation.level, session.timeout.ms, heartbeat.interval.ms,
// max.poll.interval.ms (rebalance timeout), enable.auto.commit,
// group.instance.id (static membership, KIP-345),
// auto.commit.interval.ms, partition.assignment.strategy, client.id and the
// common ones, and the security keys (Security).
func ConsumerOptions(props map[string]string) (Options, error) {
	o, err := newOptions(props)
	if err != nil {
		return o, err
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		v := strings.TrimSpace(props[k])
		if ok, err := common(&o, k, v); err != nil {
			return o, err
		} else if ok {
			continue
		}
		var n int64
		var err error
		switch k {
		case "fetch.min.bytes", "fetch.max.bytes", "max.partition.fetch.bytes", "fetch.max.wait.ms",
			"session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "auto.commit.interval.ms":
			if n, err = propInt(k, v, 0); err != nil {
				return o, err
			}
		}
		switch k {
		case "group.id":
			o.Group = v
		case "group.instance.id":
			// Static membership (KIP-345): JoinGroup v5+ with this id.
			if v != "" {
				o.Opts = append(o.Opts, kgo.InstanceID(v))
			}
		case "auto.offset.reset":
			switch strings.ToLower(v) {
			case "earliest":
				o.Opts = append(o.Opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			case "latest":
				o.Opts = append(o.Opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
			case "none":
				o.Opts = append(o.Opts, kgo.ConsumeResetOffset(kgo.NoResetOffset()))
			default:
				return o, fmt.Errorf("invalid value %s for configuration auto.offset.reset: expected earliest, latest or none", v)
			}
		case "fetch.min.bytes":
			o.Opts = append(o.Opts, kgo.FetchMinBytes(int32(min(max(n, 1), 1<<30))))
		case "fetch.max.bytes":
			o.Opts = append(o.Opts, kgo.FetchMaxBytes(int32(min(max(n, 1), 1<<30))))
		case "max.partition.fetch.bytes":
			o.Opts = append(o.Opts, kgo.FetchMaxPartitionBytes(int32(min(max(n, 1), 1<<30))))
		case "fetch.max.wait.ms":
			o.Opts = append(o.Opts, kgo.FetchMaxWait(max(msDur(n), 10*time.Millisecond)))
		case "isolation.level":
			switch strings.ToLower(v) {
			case "read_committed":
				o.Opts = append(o.Opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			case "read_uncommitted":
				o.Opts = append(o.Opts, kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
			default:
				return o, fmt.Errorf("invalid value %s for configuration isolation.level: expected read_committed or read_uncommitted", v)
			}
		case "session.timeout.ms":
			o.Opts = append(o.Opts, kgo.SessionTimeout(max(msDur(n), 100*time.Millisecond)))
		case "heartbeat.interval.ms":
			o.Opts = append(o.Opts, kgo.HeartbeatInterval(max(msDur(n), time.Millisecond)))
		case "max.poll.interval.ms":
			o.Opts = append(o.Opts, kgo.RebalanceTimeout(max(msDur(n), 100*time.Millisecond)))
		case "enable.auto.commit":
			b, err := propBool(k, v)
			if err != nil {
				return o, err
			}
			if !b {
				o.Opts = append(o.Opts, kgo.DisableAutoCommit())
			}
		case "auto.commit.interval.ms":
			o.Opts = append(o.Opts, kgo.AutoCommitInterval(max(msDur(n), time.Millisecond)))
		case "partition.assignment.strategy":
			bs, err := balancers(v)
			if err != nil {
				return o, err
			}
			o.Opts = append(o.Opts, kgo.Balancers(bs...))
		default:
			o.Ignored = append(o.Ignored, k)
		}
	}
	return o, nil
}

// balancers maps Kafka assignor class names (or their short names) to kgo
// balancers.
func balancers(v string) ([]kgo.GroupBalancer, error) {
	var out []kgo.GroupBalancer
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		short := strings.ToLower(s[strings.LastIndex(s, ".")+1:])
		switch short {
		case "range", "rangeassignor":
			out = append(out, kgo.RangeBalancer())
		case "roundrobin", "roundrobinassignor":
			out = append(out, kgo.RoundRobinBalancer())
		case "sticky", "stickyassignor":
			out = append(out, kgo.StickyBalancer())
		case "cooperative-sticky", "cooperativestickyassignor":
			out = append(out, kgo.CooperativeStickyBalancer())
		case "":
		default:
			return nil, fmt.Errorf("invalid value %s for configuration partition.assignment.strategy", s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("partition.assignment.strategy is empty")
	}
	return out, nil
}
