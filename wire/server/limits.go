package server

import (
	"net"
	"strings"
	"sync"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"gregor/config"
)

// connLimits applies the broker's connection quotas at accept
// (config.ConnectionLimits: max.connections, max.connections.per.ip and
// its overrides, max.connection.creation.rate): a connection past a limit
// is closed before it is read from, counted in Stats.ConnectionsRefused
// and logged; connections already open are never touched.
type connLimits struct {
	cfg         config.ConnectionLimits
	interBroker string                   // listener exempt from max.connections
	rate        *rate.Limiter            // nil = unlimited
	lrate       map[string]*rate.Limiter // per listener; absent = unlimited

	mu          sync.Mutex
	total       int
	perIP       map[string]int
	perListener map[string]int
}

func newConnLimits(cfg config.ConnectionLimits, interBroker string) *connLimits {
	l := &connLimits{interBroker: interBroker, perIP: map[string]int{}, perListener: map[string]int{}, lrate: map[string]*rate.Limiter{}}
	l.set(cfg)
	return l
}

// newRate is the limiter of a creation rate (connections per second,
// a second's burst); nil = unlimited, and 0 admits nothing.
func newRate(perSec int) *rate.Limiter {
	switch {
	case perSec > 0 && perSec < config.Unlimited:
		return rate.NewLimiter(rate.Limit(perSec), perSec)
	case perSec == 0:
		return rate.NewLimiter(0, 0)
	}
	return nil
}

// set installs new limits (dynamic broker configs): later accepts obey
// them; connections already open stay, even above a lowered limit, as
// Kafka's ConnectionQuotas leaves them. A changed creation rate starts a
// fresh limiter (a full second's burst).
func (l *connLimits) set(cfg config.ConnectionLimits) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cfg.CreationRate != l.cfg.CreationRate || l.rate == nil {
		l.rate = newRate(cfg.CreationRate)
	}
	for name, lim := range cfg.PerListener {
		if old, ok := l.cfg.PerListener[name]; !ok || old.CreationRate != lim.CreationRate || l.lrate[name] == nil {
			l.lrate[name] = newRate(lim.CreationRate)
		}
	}
	for name := range l.lrate {
		if _, ok := cfg.PerListener[name]; !ok {
			delete(l.lrate, name)
		}
	}
	l.cfg = cfg
}

// SetConnectionLimits replaces the connection quotas at run time
// (max.connections, max.connections.per.ip(.overrides),
// max.connection.creation.rate changed through /config/brokers): new
// connections are admitted against them; open ones are not disturbed.
// A server built without Config.Limits starts applying them now.
func (s *Server) SetConnectionLimits(cfg config.ConnectionLimits) { s.limits.set(cfg) }

// hostOf is the client IP of a connection's remote address, "" when it
// has none (a pipe in tests).
func hostOf(nc net.Conn) string {
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return ""
}

// admit reserves a place for a new connection from ip on listener, or
// returns the limit that refuses it (its config name).
func (l *connLimits) admit(ip, listener string) (refusedBy string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, perListener := l.cfg.PerListener[listener]
	if perListener && l.perListener[listener] >= lim.Max {
		return listenerKey(listener, "max.connections")
	}
	if listener != l.interBroker && l.total >= l.cfg.Max {
		return "max.connections"
	}
	limit, key := l.cfg.PerIP, "max.connections.per.ip"
	if n, ok := l.cfg.PerIPOverrides[ip]; ok {
		limit, key = n, "max.connections.per.ip.overrides"
	}
	if l.perIP[ip] >= limit {
		return key
	}
	if r := l.lrate[listener]; r != nil && !r.Allow() {
		return listenerKey(listener, "max.connection.creation.rate")
	}
	if l.rate != nil && !l.rate.Allow() {
		return "max.connection.creation.rate"
	}
	l.total++
	l.perIP[ip]++
	l.perListener[listener]++
	return ""
}

// listenerKey is the config name of a listener's limit, as Kafka writes it.
func listenerKey(listener, suffix string) string {
	return "listener.name." + strings.ToLower(listener) + "." + suffix
}

// release gives back an admitted connection's place.
func (l *connLimits) release(ip, listener string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.perListener[listener]--; l.perListener[listener] <= 0 {
		delete(l.perListener, listener)
	}
	if l.perIP[ip]--; l.perIP[ip] <= 0 {
		delete(l.perIP, ip)
	}
}

// refuse closes a connection a limit refused, counted and logged (at
// info: a client or a configuration matter, not a broker fault).
func (s *Server) refuse(nc net.Conn, listener, ip, limit string) {
	s.Stats.ConnectionsRefused.Add(1)
	s.log.Info("connection refused: limit reached", zap.String("listener", listener), zap.String("client", ip), zap.String("limit", limit))
	nc.Close()
}
