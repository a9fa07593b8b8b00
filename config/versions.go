package config

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"
)

// metadataVersions are Kafka 3.9's MetadataVersion ids in order
// (MetadataVersion.ibpVersion); up to 3.9-IV0 (LATEST_PRODUCTION) they
// are production versions, whose release ("2.8", "0.10.2") names the
// last version of that release too.
var metadataVersions = strings.Fields(`0.8.0 0.8.1 0.8.2 0.9.0 0.10.0-IV0 0.10.0-IV1 0.10.1-IV0 0.10.1-IV1
	0.10.1-IV2 0.10.2-IV0 0.11.0-IV0 0.11.0-IV1 0.11.0-IV2 1.0-IV0 1.1-IV0 2.0-IV0 2.0-IV1 2.1-IV0 2.1-IV1
	2.1-IV2 2.2-IV0 2.2-IV1 2.3-IV0 2.3-IV1 2.4-IV0 2.4-IV1 2.5-IV0 2.6-IV0 2.7-IV0 2.7-IV1 2.7-IV2 2.8-IV0
	2.8-IV1 3.0-IV0 3.0-IV1 3.1-IV0 3.2-IV0 3.3-IV0 3.3-IV1 3.3-IV2 3.3-IV3 3.4-IV0 3.5-IV0 3.5-IV1 3.5-IV2
	3.6-IV0 3.6-IV1 3.6-IV2 3.7-IV0 3.7-IV1 3.7-IV2 3.7-IV3 3.7-IV4 3.8-IV0 3.9-IV0 4.0-IV0 4.0-IV1`)

var (
	latestProduction = slices.Index(metadataVersions, "3.9-IV0")
	minGregorIBP     = slices.Index(metadataVersions, "2.8-IV0")
	ibp30            = slices.Index(metadataVersions, "3.0-IV0")
	recordV2         = slices.Index(metadataVersions, "0.11.0-IV0") // message format v2
)

// parseMetadataVersion is MetadataVersion.fromVersionString: "3.9",
// "3.9.0", "3.9-IV0", "0.10.2.1"… (releases before 1.0 have three
// components, the others two; more are cut off). It returns the version's
// rank in metadataVersions.
func parseMetadataVersion(key, v string) (int, error) {
	segs := strings.Split(v, ".")
	n := 2
	if strings.HasPrefix(v, "0.") {
		n = 3
	}
	k := v
	if len(segs) > n {
		k = strings.Join(segs[:n], ".")
	}
	if i := slices.Index(metadataVersions, k); i >= 0 {
		return i, nil
	}
	// A release names its last production version.
	for i := latestProduction; i >= 0; i-- {
		if rel, _, _ := strings.Cut(metadataVersions[i], "-"); rel == k {
			return i, nil
		}
	}
	return -1, invalid(key, v, "Version %s is not a valid version", v)
}

func versionKey(def string) brokerKey {
	return checkKey(func(_ *Broker, key, v string) error {
		_, err := parseMetadataVersion(key, v)
		return err
	}, kmsg.ConfigTypeString, def)
}

var versionKeys = map[string]brokerKey{
	"inter.broker.protocol.version": versionKey("3.9-IV0"),
	"log.message.format.version":    versionKey("3.0-IV1"),
}

func init() {
	for k, v := range versionKeys {
		brokerKeys[k] = v
		delete(ignoredKeys, k)
	}
}

// checkVersions decides what Gregor does with the two version keys.
// Gregor's brokers speak Kafka 3.9's inter-broker protocol and write
// message format v2 whatever they say: an inter.broker.protocol.version
// below 2.8, or above 3.9 (an unreleased one), cannot be honoured and is
// refused; so is a log.message.format.version below 0.11.0 (formats
// v0/v1 on disk) under an inter-broker protocol below 3.0, the one case
// where Kafka 3.9 still applies it.
func checkVersions(b *Broker) error {
	ibp, ibpV := 0, b.Raw["inter.broker.protocol.version"]
	if ibpV == "" {
		ibp = latestProduction
	} else {
		ibp, _ = parseMetadataVersion("", ibpV)
	}
	if ibp < minGregorIBP || ibp > latestProduction {
		return invalid("inter.broker.protocol.version", ibpV,
			"Gregor's brokers speak Kafka 3.9's inter-broker protocol (3.9-IV0) and can stand in for 2.8 and later only")
	}
	if v := b.Raw["log.message.format.version"]; v != "" && ibp < ibp30 {
		if f, _ := parseMetadataVersion("", v); f < recordV2 {
			return invalid("log.message.format.version", v,
				"Gregor writes message format v2 only: with inter.broker.protocol.version %s (below 3.0) Kafka would write v0/v1 batches", ibpV)
		}
	}
	return nil
}

// warnVersions logs what Kafka logs for log.message.format.version under
// an inter-broker protocol of 3.0 or later (createBrokerWarningMessage),
// and that an inter.broker.protocol.version below 3.9 changes nothing on
// the wire here.
func warnVersions(b *Broker, log *zap.Logger) {
	ibpV := b.Raw["inter.broker.protocol.version"]
	ibp := latestProduction
	if ibpV != "" {
		ibp, _ = parseMetadataVersion("", ibpV)
	} else {
		ibpV = "3.9-IV0"
	}
	if v := b.Raw["log.message.format.version"]; v != "" && ibp >= ibp30 {
		log.Warn("Broker configuration log.message.format.version with value " + v + " is ignored " +
			"because the inter-broker protocol version `" + ibpV + "` is greater or equal than 3.0. " +
			"This configuration is deprecated and it will be removed in Apache Kafka 4.0.")
	}
	if ibp < latestProduction {
		log.Warn("inter.broker.protocol.version below 3.9 is accepted for rolling-upgrade configs, but Gregor's brokers speak 3.9's inter-broker protocol whatever it says",
			zap.String("inter.broker.protocol.version", ibpV))
	}
}
