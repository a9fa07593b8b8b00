package broker

import (
	"fmt"

	"gregor/config"
	"gregor/wire/connsetup"
	"gregor/wire/security/clientsec"
)

// peerSecurity is how this broker's own connections to the other brokers
// are secured: inter is the inter-broker listener's (follower fetchers,
// transaction markers, KIP-890 verification, controlled shutdown),
// control the control-plane listener's (the controller channel; nil
// without control.plane.listener.name). Built once, at start.
type peerSecurity struct {
	inter   clientsec.Client
	control *clientsec.Client
}

func newPeerSecurity(cfg *config.Broker) (peerSecurity, error) {
	var ps peerSecurity
	var err error
	if ps.inter, err = listenerClient(cfg, cfg.Security.InterBrokerListener); err != nil {
		return ps, err
	}
	// socket.connection.setup.timeout.ms/.max.ms: one per-address record
	// of failed setups for every inter-broker connection.
	ps.inter.Setup = connsetup.New(cfg.ConnectionSetup.Timeout, cfg.ConnectionSetup.Max)
	if l := cfg.Security.ControlPlaneListener; l != "" {
		c, err := listenerClient(cfg, l)
		if err != nil {
			return ps, err
		}
		c.Setup = ps.inter.Setup
		ps.control = &c
	}
	return ps, nil
}

// listenerClient is the client end of the named listener's security: its
// ssl.* settings (listener.name.<l>.ssl.* over ssl.*) give the truststore
// that verifies the peer, the keystore that is this broker's client
// certificate, and ssl.endpoint.identification.algorithm; on SASL_*
// listeners sasl.mechanism.inter.broker.protocol with the broker's own
// credentials (config.Broker.ListenerClientSASL). Errors name the listener.
func listenerClient(cfg *config.Broker, listener string) (clientsec.Client, error) {
	c := clientsec.Client{Protocol: cfg.ListenerProtocol(listener)}
	if c.Protocol.UsesTLS() {
		st, err := cfg.ListenerSSL(listener)
		if err != nil {
			return c, err
		}
		if c.TLS, err = st.Client(); err != nil {
			return c, fmt.Errorf("inter-broker listener %s: %w", listener, err)
		}
	}
	if c.Protocol.UsesSASL() {
		mech, user, pass, err := cfg.ListenerClientSASL(listener)
		if err != nil {
			return c, fmt.Errorf("inter-broker listener %s: %w", listener, err)
		}
		if c.SASL, err = clientsec.Mechanism(mech, user, pass); err != nil {
			return c, fmt.Errorf("sasl.mechanism.inter.broker.protocol: %w", err)
		}
	}
	return c, c.Validate()
}
