package admin

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
)

// kafkaErrorAliases maps the names Apache Kafka's Errors enum uses today,
// and the older names it used before (both still appear in docs, logs and
// scripts), to the code, where franz-go's kerr spells the code differently.
// Names kerr already spells as Kafka does need no entry.
var kafkaErrorAliases = map[string]int16{
	// Code 6: Kafka 2.x renamed NOT_LEADER_FOR_PARTITION to this; kerr
	// keeps the old name.
	"NOT_LEADER_OR_FOLLOWER": 6,
	// Names from before Kafka 0.11 / 1.0 renames.
	"UNKNOWN":                            -1,
	"INVALID_MESSAGE":                    2,
	"MESSAGE_SIZE_TOO_LARGE":             10,
	"OFFSETS_LOAD_IN_PROGRESS":           14,
	"GROUP_LOAD_IN_PROGRESS":             14,
	"CONSUMER_COORDINATOR_NOT_AVAILABLE": 15,
	"GROUP_COORDINATOR_NOT_AVAILABLE":    15,
	"NOT_COORDINATOR_FOR_CONSUMER":       16,
	"NOT_COORDINATOR_FOR_GROUP":          16,
	"INVALID_TOPIC":                      17,
}

// kafkaErrorNames maps every name kerr knows (upper case) to its code,
// built once from kerr's table.
var kafkaErrorNames = func() map[string]int16 {
	m := make(map[string]int16)
	for c := int16(-1); c < 1000; c++ {
		if e, ok := kerr.ErrorForCode(c).(*kerr.Error); ok && e.Code == c {
			m[e.Message] = c
		}
	}
	return m
}()

// parseErrorCode parses the error of a request fault: a Kafka error name as
// Apache Kafka's Errors enum spells it now or spelled it before
// (NOT_LEADER_OR_FOLLOWER and NOT_LEADER_FOR_PARTITION are both code 6),
// case-insensitive, or a numeric code. The code must be a known, non-zero
// Kafka error code (-1 is UNKNOWN_SERVER_ERROR); anything else is an error
// naming what was given.
func parseErrorCode(s string) (int16, error) {
	name := strings.ToUpper(strings.TrimSpace(s))
	if name == "" {
		return 0, fmt.Errorf("an error fault needs an error: a Kafka error name such as NOT_LEADER_OR_FOLLOWER, or a code")
	}
	if n, err := strconv.ParseInt(name, 10, 16); err == nil {
		c := int16(n)
		if e, ok := kerr.ErrorForCode(c).(*kerr.Error); c != 0 && ok && e.Code == c {
			return c, nil
		}
		return 0, fmt.Errorf("unknown Kafka error code %d", n)
	}
	if c, ok := kafkaErrorNames[name]; ok {
		return c, nil
	}
	if c, ok := kafkaErrorAliases[name]; ok {
		return c, nil
	}
	return 0, fmt.Errorf("unknown Kafka error %q (a name such as NOT_LEADER_OR_FOLLOWER, or a code)", s)
}
