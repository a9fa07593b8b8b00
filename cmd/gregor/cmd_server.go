package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"gregor/cmd/internal/broker"
	"gregor/config"
)

func init() {
	root.AddCommand(&cobra.Command{
		Use:   "server <server.properties>",
		Short: "Run a broker (kafka-server-start.sh)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			log := newLogger()
			defer func() { _ = log.Sync() }()
			cfg, err := config.Load(args[0], log.Named("config"))
			if err != nil {
				return err
			}
			b, err := broker.Start(cfg, log)
			if err != nil {
				return err
			}
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
			s := <-sig
			signal.Stop(sig)
			log.Info("shutting down", zap.String("signal", s.String()))
			if err := b.Close(); err != nil {
				return fmt.Errorf("shutdown: %w", err)
			}
			log.Info("shut down cleanly")
			return nil
		},
	})
}

// newLogger writes human-readable lines to stderr at INFO.
func newLogger() *zap.Logger {
	cfg := zap.NewProductionConfig()
	cfg.Encoding = "console"
	cfg.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	cfg.EncoderConfig.EncodeLevel = zapcore.CapitalLevelEncoder
	cfg.Sampling = nil
	cfg.DisableStacktrace = true
	log, err := cfg.Build()
	if err != nil {
		return zap.NewNop()
	}
	return log
}
