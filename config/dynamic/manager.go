// Package dynamic applies dynamic broker configs (KIP-226) at run time:
// the broker's effective config is server.properties overlaid by
// /config/brokers/<default>, then by /config/brokers/<id> (Kafka's
// DynamicBrokerConfig precedence). Manager holds the layers and a small
// registry of components (Kafka's Reconfigurable): each registers the keys
// it reads and is handed the new effective config when one of them
// changes. An update is validated by every interested component first
// and applied to all of them only if all accept it, so a refused value
// leaves nothing half-applied. store.go reads and writes the znodes;
// watcher.go re-reads them when a /config/changes notification names
// brokers/<id> or brokers/<default>.
package dynamic

import (
	"fmt"
	"maps"
	"strconv"
	"sync"

	"go.uber.org/zap"

	"gregor/config"
)

// Component is one reconfigurable part of the broker (Kafka's
// BrokerReconfigurable).
type Component struct {
	// Name names the component in logs and errors.
	Name string
	// Keys are the broker config names it reads; Apply runs when the
	// effective value of one of them changes.
	Keys []string
	// Validate may refuse a new effective config next, the one in force
	// being cur (nil = accept all); it must not change anything, nor call
	// the Manager (it runs under its lock).
	Validate func(cur, next *config.Broker) error
	// Apply installs the new effective config. It must not block on the
	// network or another actor for long: it runs on the watcher's
	// goroutine, one update at a time.
	Apply func(next *config.Broker)
}

// Manager holds a broker's static config and its two dynamic layers.
// Create with New; safe for concurrent use.
type Manager struct {
	static *config.Broker
	log    *zap.Logger

	mu        sync.Mutex
	defaults  map[string]string // /config/brokers/<default>
	perBroker map[string]string // /config/brokers/<id>
	current   *config.Broker
	comps     []Component
}

// New returns a Manager over static (server.properties as loaded), with
// no dynamic configs yet (Load them before starting components).
func New(static *config.Broker, log *zap.Logger) *Manager {
	if log == nil {
		log = zap.NewNop()
	}
	return &Manager{static: static, log: log, defaults: map[string]string{}, perBroker: map[string]string{}, current: static}
}

// BrokerID is the entity name of this broker's own dynamic configs.
func (m *Manager) BrokerID() string { return strconv.Itoa(int(m.static.BrokerID)) }

// Static is the server.properties config the broker started with.
func (m *Manager) Static() *config.Broker { return m.static }

// Current is the effective config now (static when nothing is dynamic).
// The value is never modified: an update installs a new one.
func (m *Manager) Current() *config.Broker {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.current
}

// Snapshot is Current and Layers read together (one consistent view).
func (m *Manager) Snapshot() (*config.Broker, config.DynamicLayers) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.current, config.DynamicLayers{PerBroker: maps.Clone(m.perBroker), Defaults: maps.Clone(m.defaults)}
}

// Layers are copies of the dynamic layers now in force.
func (m *Manager) Layers() config.DynamicLayers {
	m.mu.Lock()
	defer m.mu.Unlock()
	return config.DynamicLayers{PerBroker: maps.Clone(m.perBroker), Defaults: maps.Clone(m.defaults)}
}

// Register adds a component; it is not called for the current config
// (components start from Current()). One call per component.
func (m *Manager) Register(c Component) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.comps = append(m.comps, c)
}

// RegisterFunc is Register for a component that only applies: name, the
// keys it reads, and apply.
func (m *Manager) RegisterFunc(name string, keys []string, apply func(next *config.Broker)) {
	m.Register(Component{Name: name, Keys: keys, Apply: apply})
}

// effective parses the overlay of the layers: static itself when both
// are empty (so fields a caller set on it without Raw stay), else a new
// config parsed from static.Raw with the layers on top. Errors: a value or
// a cross-key rule the static parser refuses (*config.ValueError).
func (m *Manager) effective(defaults, perBroker map[string]string) (*config.Broker, error) {
	if len(defaults) == 0 && len(perBroker) == 0 {
		return m.static, nil
	}
	return config.Parse(config.Overlay(m.static.Raw, defaults, perBroker), nil)
}

// changed reports whether any of keys has a different raw value in a and b.
func changed(keys []string, a, b map[string]string) bool {
	for _, k := range keys {
		va, oka := a[k]
		vb, okb := b[k]
		if oka != okb || va != vb {
			return true
		}
	}
	return false
}

// Check validates a would-be update of one layer without applying it:
// entity is config.DefaultEntity or a broker id; props its whole new
// content. It runs config.ValidateDynamic, parses the effective config
// this broker would have, and asks every interested component (Kafka's
// DynamicBrokerConfig.validate with processReconfiguration validateOnly).
func (m *Manager) Check(entity string, props map[string]string) error {
	perBroker := entity != config.DefaultEntity
	if err := config.ValidateDynamic(props, perBroker); err != nil {
		return err
	}
	m.mu.Lock()
	defaults, per := m.defaults, m.perBroker
	comps := append([]Component(nil), m.comps...)
	cur := m.current
	m.mu.Unlock()
	if perBroker {
		per = props
	} else {
		defaults = props
	}
	next, err := m.effective(defaults, per)
	if err != nil {
		return err
	}
	return validateAll(comps, cur, next)
}

func validateAll(comps []Component, cur, next *config.Broker) error {
	for _, c := range comps {
		if c.Validate == nil || !changed(c.Keys, cur.Raw, next.Raw) {
			continue
		}
		if err := c.Validate(cur, next); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	return nil
}

// Update installs new dynamic layers (nil leaves a layer as it is): the
// effective config is parsed, every component whose keys changed
// validates it, then all of them apply it. Keys of a layer that are not
// dynamic (a znode written by hand, or by an older Gregor) are dropped
// with a warning, as Kafka's removeInvalidConfigs does; the rest applies.
// Errors: the effective config does not parse or a component refuses it;
// nothing changes then.
func (m *Manager) Update(defaults, perBroker map[string]string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if defaults == nil {
		defaults = m.defaults
	} else {
		defaults = m.usable(config.DefaultEntity, defaults)
	}
	if perBroker == nil {
		perBroker = m.perBroker
	} else {
		perBroker = m.usable(m.BrokerID(), perBroker)
	}
	next, err := m.effective(defaults, perBroker)
	if err != nil {
		return err
	}
	cur := m.current
	if err := validateAll(m.comps, cur, next); err != nil {
		return err
	}
	m.defaults, m.perBroker, m.current = defaults, perBroker, next
	for _, c := range m.comps {
		if changed(c.Keys, cur.Raw, next.Raw) {
			c.Apply(next)
			m.log.Info("dynamic broker config applied", zap.String("component", c.Name))
		}
	}
	return nil
}

// usable decrypts the password configs of a layer as stored (with
// password.encoder.secret) and drops the keys that ValidateDynamic refuses
// one by one, or that cannot be decrypted.
func (m *Manager) usable(entity string, props map[string]string) map[string]string {
	props, bad := m.static.PasswordEncoder.DecodePasswords(props)
	for k, err := range bad {
		m.log.Warn("ignoring a dynamic password config that cannot be decrypted (password.encoder.secret?)", zap.String("entity", entity), zap.String("key", k), zap.Error(err))
	}
	out := map[string]string{}
	for k, v := range props {
		if err := config.ValidateDynamic(map[string]string{k: v}, entity != config.DefaultEntity); err != nil {
			m.log.Warn("ignoring a dynamic broker config", zap.String("entity", entity), zap.String("key", k), zap.Error(err))
			continue
		}
		out[k] = v
	}
	return out
}
