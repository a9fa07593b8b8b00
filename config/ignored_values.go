package config

import (
	"maps"
	"slices"
	"strings"
)

// ignoredValidators check keys that stay in ignoredKeys (they have no use
// in Gregor and get the not-applied WARN) with Kafka's validators, so a
// file Kafka would refuse is refused here too rather than loaded. resolve
// runs them on the values in Raw.
var ignoredValidators = map[string]func(key, v string) error{
	"background.threads":                  intRange(32, 1),
	"zookeeper.max.in.flight.requests":    intRange(32, 1),
	"metrics.num.samples":                 intRange(32, 1),
	"metrics.sample.window.ms":            intRange(64, 1),
	"kafka.metrics.polling.interval.secs": intRange(32, 1),
	// Sensor.RecordingLevel.forName: an enum name, case-insensitive.
	"metrics.recording.level": func(key, v string) error {
		switch strings.ToUpper(v) {
		case "INFO", "DEBUG", "TRACE":
			return nil
		}
		return invalid(key, v, "No enum constant org.apache.kafka.common.metrics.Sensor.RecordingLevel.%s", strings.ToUpper(v))
	},
}

func intRange(bits int, min int64) func(key, v string) error {
	return func(key, v string) error {
		_, err := parseInt(key, v, bits, min)
		return err
	}
}

// checkIgnoredValues runs ignoredValidators in key order over the keys
// present in the file.
func checkIgnoredValues(b *Broker) error {
	for _, k := range slices.Sorted(maps.Keys(ignoredValidators)) {
		if v, ok := b.Raw[k]; ok {
			if err := ignoredValidators[k](k, v); err != nil {
				return err
			}
		}
	}
	return nil
}
