package logging

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func newObserved(t *testing.T, root string) (*Levels, *zap.Logger, *observer.ObservedLogs) {
	t.Helper()
	inner, logs := observer.New(zapcore.DebugLevel)
	l := New(root)
	return l, l.Logger(zap.New(inner)), logs
}

func messages(logs *observer.ObservedLogs) []string {
	var out []string
	for _, e := range logs.TakeAll() {
		out = append(out, e.LoggerName+":"+e.Message)
	}
	return out
}

func str(s string) *string { return &s }

func TestLevelsFilterByNameAndInherit(t *testing.T) {
	l, log, logs := newObserved(t, Info)
	l.Declare("controller", "controller.zk")
	ctrl, zk, store := log.Named("controller"), log.Named("controller").Named("zk"), log.Named("storage")
	ctrl.Debug("c-debug")
	zk.Debug("zk-debug")
	store.Info("s-info")
	if got := strings.Join(messages(logs), " "); got != "storage:s-info" {
		t.Fatalf("at root INFO: %q", got)
	}
	if _, err := l.Alter([]Op{{Name: "controller", Op: OpSet, Value: str(Debug)}}, false); err != nil {
		t.Fatal(err)
	}
	ctrl.Debug("c-debug")
	zk.Debug("zk-debug") // inherits controller's DEBUG
	store.Debug("s-debug")
	if got := strings.Join(messages(logs), " "); got != "controller:c-debug controller.zk:zk-debug" {
		t.Fatalf("controller at DEBUG: %q", got)
	}
	if l.Level("controller.zk") != Debug || l.Level("storage") != Info {
		t.Fatalf("levels %v", l.Loggers())
	}
	// zk's own WARN wins over controller's DEBUG.
	if _, err := l.Alter([]Op{{Name: "controller.zk", Op: OpSet, Value: str(Warn)}}, false); err != nil {
		t.Fatal(err)
	}
	zk.Info("zk-info")
	zk.Warn("zk-warn")
	if got := strings.Join(messages(logs), " "); got != "controller.zk:zk-warn" {
		t.Fatalf("zk at WARN: %q", got)
	}
	// DELETE: back to inheriting (controller's DEBUG, then root's INFO).
	if _, err := l.Alter([]Op{{Name: "controller.zk", Op: OpDelete}, {Name: "controller", Op: OpDelete}}, false); err != nil {
		t.Fatal(err)
	}
	zk.Debug("zk-debug")
	ctrl.Debug("c-debug")
	ctrl.Info("c-info")
	if got := strings.Join(messages(logs), " "); got != "controller:c-info" {
		t.Fatalf("after DELETE: %q", got)
	}
	// Root ERROR silences every inheriting logger's warnings.
	if _, err := l.Alter([]Op{{Name: Root, Op: OpSet, Value: str(Error)}}, false); err != nil {
		t.Fatal(err)
	}
	log.Warn("root-warn")
	store.Warn("s-warn")
	store.Error("s-error")
	if got := strings.Join(messages(logs), " "); got != "storage:s-error" {
		t.Fatalf("root ERROR: %q", got)
	}
	got := l.Loggers()
	if got[Root] != Error || got["controller"] != Error || got["controller.zk"] != Error || got["storage"] != Error {
		t.Fatalf("loggers %v", got)
	}
}

func TestLevelsKnownNames(t *testing.T) {
	l, log, _ := newObserved(t, Info)
	l.Declare("replicas")
	log.Named("seen").Info("x")   // a logger that logged is known too
	log.Named("quiet").Debug("x") // below every level: zap never asks the core
	names := strings.Join(l.Names(), ",")
	if names != "root,replicas,seen" {
		t.Fatalf("names %s", names)
	}
	if l.Exists("never") {
		t.Fatal("a logger never declared nor used exists")
	}
}

func TestLevelsValidation(t *testing.T) {
	l, log, logs := newObserved(t, Info)
	l.Declare("storage")
	cases := []struct {
		ops  []Op
		code *kerr.Error
		msg  string
	}{
		{[]Op{{Name: "nope", Op: OpSet, Value: str(Debug)}}, kerr.InvalidConfig, "Logger nope does not exist!"},
		{[]Op{{Name: "nope", Op: OpDelete}}, kerr.InvalidConfig, "Logger nope does not exist!"},
		{[]Op{{Name: "storage", Op: OpSet, Value: str("debug")}}, kerr.InvalidConfig,
			"Cannot set the log level of storage to debug as it is not a supported log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN"},
		{[]Op{{Name: "storage", Op: OpSet, Value: str("OFF")}}, kerr.InvalidConfig,
			"Cannot set the log level of storage to OFF as it is not a supported log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN"},
		{[]Op{{Name: Root, Op: OpDelete}}, kerr.InvalidRequest, "Removing the log level of the root logger is not allowed"},
		{[]Op{{Name: "storage", Op: OpAppend, Value: str(Debug)}}, kerr.InvalidRequest, "APPEND operation is not allowed for the BROKER_LOGGER resource"},
		{[]Op{{Name: "storage", Op: OpSubtract, Value: str(Debug)}}, kerr.InvalidRequest, "SUBTRACT operation is not allowed for the BROKER_LOGGER resource"},
		{[]Op{{Name: "storage", Op: 7}}, kerr.InvalidRequest, "Unknown operation type 7 is not allowed for the BROKER_LOGGER resource"},
		// A good op before a bad one is not applied.
		{[]Op{{Name: "storage", Op: OpSet, Value: str(Debug)}, {Name: "nope", Op: OpSet, Value: str(Debug)}}, kerr.InvalidConfig, "Logger nope does not exist!"},
	}
	for _, c := range cases {
		_, err := l.Alter(c.ops, false)
		var ae *AlterError
		if !errors.As(err, &ae) || ae.Code != c.code || ae.Message != c.msg {
			t.Errorf("%+v: %v, want %v %q", c.ops, err, c.code, c.msg)
		}
	}
	if l.Level("storage") != Info {
		t.Fatalf("a refused alteration changed storage to %s", l.Level("storage"))
	}
	// validateOnly changes nothing.
	if _, err := l.Alter([]Op{{Name: "storage", Op: OpSet, Value: str(Trace)}}, true); err != nil || l.Level("storage") != Info {
		t.Fatalf("validate only: %v, level %s", err, l.Level("storage"))
	}
	// TRACE is described as TRACE and enables debug entries.
	if _, err := l.Alter([]Op{{Name: "storage", Op: OpSet, Value: str(Trace)}}, false); err != nil {
		t.Fatal(err)
	}
	log.Named("storage").Debug("d")
	if got := messages(logs); len(got) != 1 || l.Loggers()["storage"] != Trace {
		t.Fatalf("TRACE: %v %v", got, l.Loggers())
	}
}

func TestLevelsLoggerWrapsOnce(t *testing.T) {
	l, log, _ := newObserved(t, Info)
	if again := l.Logger(log); again != log {
		t.Fatal("wrapping a wrapped logger again")
	}
	if New("bogus").Level(Root) != Info {
		t.Fatal("an invalid root level is not INFO")
	}
	if KafkaLevel(zapcore.DebugLevel) != Debug || KafkaLevel(zapcore.FatalLevel) != Fatal || KafkaLevel(zapcore.WarnLevel) != Warn {
		t.Fatal("KafkaLevel")
	}
}
