package clientutil

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
	fsasl "github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"gregor/wire/security/sasl"
)

// SASLMechanism is the client side of a Kafka SASL mechanism (the
// sasl.mechanism client property: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)
// for user and password, with franz-go's pkg/sasl. Errors: another
// mechanism.
//
// Hook for the tools' client security (--command-config /
// --producer.config with security.protocol=SASL_PLAINTEXT|SASL_SSL): the
// property mapping (common in kgoopts.go) passes sasl.mechanism and the
// credentials of sasl.jaas.config (SASLFromJAAS) here and adds kgo.SASL.
func SASLMechanism(mechanism, user, password string) (fsasl.Mechanism, error) {
	switch mechanism {
	case sasl.Plain:
		return plain.Auth{User: user, Pass: password}.AsMechanism(), nil
	case sasl.ScramSHA256:
		return scram.Auth{User: user, Pass: password}.AsSha256Mechanism(), nil
	case sasl.ScramSHA512:
		return scram.Auth{User: user, Pass: password}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("sasl.mechanism %s is not supported; use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", mechanism)
}

// SASLFromJAAS is the kgo option for a client's sasl.mechanism and
// sasl.jaas.config (a PlainLoginModule or ScramLoginModule entry with
// username and password options, parsed as Kafka's JaasConfig). Errors:
// a JAAS value that does not parse, lacks username or password, or an
// unsupported mechanism; the messages never include the password.
func SASLFromJAAS(mechanism, jaas string) (kgo.Opt, error) {
	mods, err := sasl.ParseJAAS(jaas)
	if err != nil {
		return nil, fmt.Errorf("sasl.jaas.config: %v", err)
	}
	if len(mods) != 1 {
		return nil, fmt.Errorf("sasl.jaas.config: JAAS config property contains %d login modules, should be 1 module", len(mods))
	}
	user, okU := mods[0].Options["username"]
	pass, okP := mods[0].Options["password"]
	if !okU || !okP {
		return nil, fmt.Errorf("sasl.jaas.config: %s needs username and password options", mods[0].Class)
	}
	m, err := SASLMechanism(mechanism, user, pass)
	if err != nil {
		return nil, err
	}
	return kgo.SASL(m), nil
}
