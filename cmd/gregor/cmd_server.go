package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"gregor/cmd/internal/broker"
	"gregor/config"
	"gregor/logging"
)

func init() {
	var overrides []string
	cmd := &cobra.Command{
		Use:   "server <server.properties> [--override property=value]*",
		Short: "Run a broker (kafka-server-start.sh)",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("USAGE: gregor server server.properties [--override property=value]*")
			}
			if len(args) > 1 { // Kafka.scala's words for stray arguments
				return fmt.Errorf("Found non argument parameters: %s", strings.Join(args[1:], ","))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// One level registry for the process (BROKER_LOGGER resources):
			// the cores log at debug, the registry filters at root INFO.
			levels := logging.New(logging.Info)
			log := levels.Logger(newLogger(false))
			defer func() { _ = log.Sync() }()
			cfg, err := config.LoadWithOverrides(args[0], overrides, log.Named("config"))
			if err != nil {
				return err
			}
			if cfg.LogFormat == "json" { // log.format=json: JSON lines from here on
				log = levels.Logger(newLogger(true))
				defer func() { _ = log.Sync() }()
			}
			opts := []broker.Option{broker.WithLogLevels(levels)}
			if cfg.PidFile != "" { // pid.file: written before the listeners serve, removed at exit
				written := false
				opts = append(opts, broker.BeforeServing(func() error {
					if err := writePidFile(cfg.PidFile); err != nil {
						return err
					}
					written = true
					return nil
				}))
				defer func() {
					if written {
						os.Remove(cfg.PidFile)
					}
				}()
			}
			b, err := broker.Start(cfg, log, opts...)
			if err != nil {
				return err
			}
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, shutdownSignals...)
			s := <-sig
			signal.Stop(sig)
			if s == syscall.SIGHUP {
				log.Warn("SIGHUP does not reload the configuration: shutting down as on SIGTERM; start the broker again to apply server.properties changes")
			}
			log.Info("shutting down", zap.String("signal", s.String()))
			if err := b.Close(); err != nil {
				return fmt.Errorf("shutdown: %w", err)
			}
			log.Info("shut down cleanly")
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&overrides, "override", nil, "a property that overrides its value in server.properties, property=value (repeatable; a later one wins)")
	root.AddCommand(cmd)
}

// shutdownSignals make a clean (controlled) shutdown. SIGHUP is one, as for
// Kafka's broker, whose JVM runs its shutdown hooks on SIGHUP; Go's default
// would kill the process without them (no controlled shutdown, no final
// checkpoints, the pid.file left behind). Kafka does not reload its
// configuration on SIGHUP, and neither does Gregor.
var shutdownSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP}

// newLogger writes to stderr: human-readable lines, or with jsonLines one
// JSON object per line (log.format=json, for log collectors under systemd
// and the like). Its core is enabled at debug: the level registry
// (gregor/logging, root INFO) decides what is written.
func newLogger(jsonLines bool) *zap.Logger {
	cfg := zap.NewProductionConfig()
	cfg.Level = zap.NewAtomicLevelAt(zapcore.DebugLevel)
	if !jsonLines {
		cfg.Encoding = "console"
		cfg.EncoderConfig.EncodeLevel = zapcore.CapitalLevelEncoder
	}
	cfg.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	cfg.Sampling = nil
	cfg.DisableStacktrace = true
	log, err := cfg.Build()
	if err != nil {
		return zap.NewNop()
	}
	return log
}

// writePidFile writes the process id (decimal and a newline) to path
// atomically (temp file + rename), for init systems and scripts.
func writePidFile(path string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return fmt.Errorf("pid.file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("pid.file: %w", err)
	}
	return nil
}
