// Package clientquota is Kafka's client quotas (KIP-13 byte rates,
// KIP-124 request time, KIP-599 controller mutations, KIP-55 users and
// (user, client-id) pairs) over the measuring core in gregor/quota: the
// quota entities as ZooKeeper stores them (/config/users/<u>,
// /config/clients/<c>, /config/users/<u>/clients/<c>, "<default>" at each
// level), the resolution of the quota that applies to a connection
// (Kafka's DefaultQuotaCallback precedence), and the managers that record
// a request's bytes, request time or partition mutations and answer the
// throttle time (ClientQuotaManager, ClientRequestQuotaManager,
// ControllerMutationQuotaManager).
//
// The package does no I/O and reads no clock on its own: the broker loads
// and refreshes the configured quotas (Watcher over a metastore.Store,
// store.go) and the handlers call the managers with the request's user
// and client id.
package clientquota

import (
	"fmt"
	"net/url"
	"strings"

	"gregor/replication/usercreds"
)

// Default is the znode name of a default entity at its level
// (ZooKeeperInternals.DEFAULT_STRING): /config/users/<default>,
// /config/clients/<default>, /config/users/<u>/clients/<default>.
const Default = "<default>"

// The quota config keys (QuotaConfigs), valid for users, clients and
// (user, client) pairs alike.
const (
	// ProducerByteRate is producer_byte_rate: produce request bytes per
	// second (type LONG).
	ProducerByteRate = "producer_byte_rate"
	// ConsumerByteRate is consumer_byte_rate: fetch response bytes per
	// second (type LONG).
	ConsumerByteRate = "consumer_byte_rate"
	// RequestPercentage is request_percentage: request handling time as a
	// percentage of one request thread over the quota window (type DOUBLE).
	RequestPercentage = "request_percentage"
	// ControllerMutationRate is controller_mutation_rate: partitions
	// created or deleted per second (KIP-599, type DOUBLE).
	ControllerMutationRate = "controller_mutation_rate"
)

// Type is one quota manager (Kafka's QuotaType).
type Type int

// The quota types, one manager each.
const (
	Produce Type = iota
	Fetch
	Request
	ControllerMutation
	numTypes
)

// Types lists every quota type.
var Types = []Type{Produce, Fetch, Request, ControllerMutation}

// Key is the config key that bounds t.
func (t Type) Key() string {
	return [...]string{ProducerByteRate, ConsumerByteRate, RequestPercentage, ControllerMutationRate}[t]
}

// String is Kafka's QuotaType name (the JMX type= of its metrics).
func (t Type) String() string {
	return [...]string{"Produce", "Fetch", "Request", "ControllerMutation"}[t]
}

// IsLong reports whether t's key is a LONG config (the byte rates); the
// others are DOUBLE.
func (t Type) IsLong() bool { return t == Produce || t == Fetch }

// TypeOfKey returns the quota type a config key bounds; ok is false for
// any other key.
func TypeOfKey(k string) (Type, bool) {
	for _, t := range Types {
		if t.Key() == k {
			return t, true
		}
	}
	return 0, false
}

// Entity is a quota entity by its znode names: User and Client are the
// sanitized user (Sanitize) and sanitized client id, Default for the
// default entity of the level, "" when the entity has no such part.
// {User: u} is /config/users/u, {Client: c} /config/clients/c,
// {User: u, Client: c} /config/users/u/clients/c.
type Entity struct {
	User, Client string
}

// Sanitize encodes a user name or client id for a znode name as Kafka's
// Sanitizer (URL encoding; the same as the SCRAM users' znodes).
func Sanitize(name string) string { return usercreds.Sanitize(name) }

// Desanitize reverses Sanitize.
func Desanitize(s string) (string, error) { return url.PathUnescape(s) }

// Path is the entity's config path relative to /config, which is also
// its /config/changes notification entity path: "users/<u>",
// "clients/<c>" or "users/<u>/clients/<c>".
func (e Entity) Path() string {
	switch {
	case e.User != "" && e.Client != "":
		return "users/" + e.User + "/clients/" + e.Client
	case e.User != "":
		return "users/" + e.User
	default:
		return "clients/" + e.Client
	}
}

// ParsePath parses a notification entity path ("users/<u>",
// "clients/<c>", "users/<u>/clients/<c>"); ok is false for anything else.
func ParsePath(p string) (Entity, bool) {
	parts := strings.Split(p, "/")
	switch {
	case len(parts) == 2 && parts[0] == "users" && parts[1] != "":
		return Entity{User: parts[1]}, true
	case len(parts) == 2 && parts[0] == "clients" && parts[1] != "":
		return Entity{Client: parts[1]}, true
	case len(parts) == 4 && parts[0] == "users" && parts[2] == "clients" && parts[1] != "" && parts[3] != "":
		return Entity{User: parts[1], Client: parts[3]}, true
	}
	return Entity{}, false
}

// String describes the entity as Kafka's ConfigCommand names it:
// "user-principal 'u'", "client-id 'c'", "the default user-principal",
// "user-principal 'u', client-id 'c'", …
func (e Entity) String() string {
	part := func(kind, s string) string {
		if s == Default {
			return "the default " + kind
		}
		n, err := Desanitize(s)
		if err != nil {
			n = s
		}
		return fmt.Sprintf("%s '%s'", kind, n)
	}
	var out []string
	if e.User != "" {
		out = append(out, part("user-principal", e.User))
	}
	if e.Client != "" {
		out = append(out, part("client-id", e.Client))
	}
	return strings.Join(out, ", ")
}
