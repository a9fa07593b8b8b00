package broker

import (
	"gregor/replication/usercreds"
	"gregor/wire/security"
	"gregor/wire/security/sasl"
	"gregor/wire/server"
)

// startCredentials loads the SCRAM credentials of /config/users into the
// broker's credential cache and starts the watcher that keeps it current
// from the /config/changes notifications the controller hands it
// (Options.OnUserConfigChange). Stopped by Close.
func (b *Broker) startCredentials() error {
	b.creds = sasl.NewCredentialCache()
	w, err := usercreds.Start(b.store, b.creds, b.log.Named("scram"))
	if err != nil {
		return err
	}
	b.credWatcher = w
	b.closers = append(b.closers, func() error { w.Close(); return nil })
	return nil
}

// saslSecurity adds each SASL listener's authenticator to the server's
// per-listener security (sasl.enabled.mechanisms, the PLAIN users of its
// JAAS config, the SCRAM credential cache, connections.max.reauth.ms),
// keeping what another part (TLS) set for the listener.
func (b *Broker) saslSecurity(sc *server.Config) {
	for name, lc := range b.cfg.SASL.Listeners {
		if sc.Security == nil {
			sc.Security = map[string]server.ListenerSecurity{}
		}
		ls, ok := sc.Security[name]
		if !ok {
			ls.Protocol = security.Protocol(lc.Protocol)
		}
		ls.SASL = &server.SASLListener{
			Auth:           &sasl.Authenticator{Mechanisms: lc.Mechanisms, PlainUsers: lc.PlainUsers, Credentials: b.creds},
			MaxReauth:      lc.MaxReauth,
			MaxReceiveSize: b.cfg.SASL.ServerMaxReceiveSize,
		}
		sc.Security[name] = ls
	}
}

// observeAuth makes the admin listener, if any, count authentications.
func (b *Broker) observeAuth(s *server.Server) {
	if b.admin != nil {
		s.Auth = b.admin.AuthMetrics()
	}
}
