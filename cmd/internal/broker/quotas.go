package broker

import (
	"fmt"

	"gregor/quota/clientquota"
)

// startQuotas builds the client quota managers (quota.window.* and
// controller.quota.window.* windows), loads every quota entity of
// /config/users and /config/clients into them and starts the watcher the
// controller's /config/changes listener hands each quota notification
// (Options.OnQuotaConfigChange). Stopped by Close.
func (b *Broker) startQuotas() error {
	b.clientQuotas = clientquota.NewManager(b.cfg.Quotas.Client, b.cfg.Quotas.ControllerMutation, nil)
	w, err := clientquota.StartWatcher(b.store, b.clientQuotas, b.log.Named("quotas"))
	if err != nil {
		return fmt.Errorf("loading client quotas: %w", err)
	}
	b.quotaWatcher = w
	b.closers = append(b.closers, func() error { w.Close(); return nil })
	return nil
}

// Quotas returns the broker's client quota managers (for the metrics).
func (b *Broker) Quotas() *clientquota.Manager { return b.clientQuotas }
