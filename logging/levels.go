// Package logging holds the broker's run-time log levels: Kafka's
// BROKER_LOGGER resources (KIP-412) over zap's named loggers. Kafka's
// broker names its log4j loggers after classes and lets an operator
// change their levels at run time with IncrementalAlterConfigs; Gregor's
// loggers are the names given to zap's Logger.Named ("storage",
// "replicas", "controller.channel", "kafka.authorizer.logger", …) and
// "root" for the unnamed logger.
//
// A logger without its own level takes the level of its nearest dotted
// ancestor that has one, else root's (log4j's inheritance: "controller.zk"
// follows "controller"). Levels are Kafka's names, mapped to zap levels:
//
//	TRACE → debug (zap has no lower level; Gregor logs nothing finer than debug)
//	DEBUG → debug
//	INFO  → info
//	WARN  → warn
//	ERROR → error
//	FATAL → dpanic (zap's DPanic, Panic and Fatal entries pass)
//
// The wrapped zap core must itself be enabled at debug for DEBUG/TRACE to
// show (the gregor binary builds it so); Levels does the filtering.
package logging

import (
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Root is the name of the root logger (Kafka's Log4jController.ROOT_LOGGER):
// zap's unnamed logger, whose level every logger without its own inherits.
const Root = "root"

// Kafka's level names (LogLevelConfig.VALID_LOG_LEVELS).
const (
	Trace = "TRACE"
	Debug = "DEBUG"
	Info  = "INFO"
	Warn  = "WARN"
	Error = "ERROR"
	Fatal = "FATAL"
)

// zapLevels maps Kafka's level names to the zap level they enable.
var zapLevels = map[string]zapcore.Level{
	Trace: zapcore.DebugLevel, Debug: zapcore.DebugLevel, Info: zapcore.InfoLevel,
	Warn: zapcore.WarnLevel, Error: zapcore.ErrorLevel, Fatal: zapcore.DPanicLevel,
}

// ValidLevel reports whether name is one of Kafka's level names (exact
// upper case, as Kafka compares them).
func ValidLevel(name string) bool { _, ok := zapLevels[name]; return ok }

// ValidLevelsString is Kafka's sorted, comma-separated list of the valid
// level names, for its error message.
var ValidLevelsString = func() string {
	names := slices.Sorted(maps.Keys(zapLevels))
	return strings.Join(names, ", ")
}()

// KafkaLevel is the Kafka level name of a zap level (the inverse of the
// mapping above; debug is DEBUG, dpanic and above FATAL).
func KafkaLevel(l zapcore.Level) string {
	switch {
	case l <= zapcore.DebugLevel:
		return Debug
	case l == zapcore.InfoLevel:
		return Info
	case l == zapcore.WarnLevel:
		return Warn
	case l == zapcore.ErrorLevel:
		return Error
	}
	return Fatal
}

// state is one immutable snapshot of the levels: readers load it without
// locking, writers replace it under Levels.mu.
type state struct {
	root     string            // Kafka level name of root
	set      map[string]string // loggers with their own level (root not included)
	minLevel zapcore.Level     // the lowest zap level any logger enables (Core.Enabled)
}

func (s *state) zapLevelOf(name string) zapcore.Level {
	return zapLevels[s.levelOf(name)]
}

// levelOf is the effective Kafka level of name: its own, else its nearest
// dotted ancestor's, else root's (Log4jController.resolveLevel).
func (s *state) levelOf(name string) string {
	if name == "" || name == Root {
		return s.root
	}
	for {
		if l, ok := s.set[name]; ok {
			return l
		}
		i := strings.LastIndexByte(name, '.')
		if i <= 0 {
			return s.root
		}
		name = name[:i]
	}
}

func newState(root string, set map[string]string) *state {
	s := &state{root: root, set: set, minLevel: zapLevels[root]}
	for _, l := range set {
		s.minLevel = min(s.minLevel, zapLevels[l])
	}
	return s
}

// Levels is the registry of the broker's loggers and their levels. Create
// with New; safe for concurrent use. The zero value is not usable.
type Levels struct {
	cur   atomic.Pointer[state]
	mu    sync.Mutex // orders writers of cur
	known sync.Map   // logger name → struct{}: declared, or seen logging
}

// New returns a registry whose root level is root (a Kafka level name;
// an invalid one is INFO) and no logger with its own level.
func New(root string) *Levels {
	if !ValidLevel(root) {
		root = Info
	}
	l := &Levels{}
	l.cur.Store(newState(root, map[string]string{}))
	return l
}

// Declare makes names known loggers (listed by Loggers, accepted by Set)
// before they log anything. "" and Root are root.
func (l *Levels) Declare(names ...string) {
	for _, n := range names {
		if n != "" && n != Root {
			l.known.LoadOrStore(n, struct{}{})
		}
	}
}

// Exists reports whether name is root or a known logger (declared, or it
// has logged an entry that reached the registry's core).
func (l *Levels) Exists(name string) bool {
	if name == Root {
		return true
	}
	_, ok := l.known.Load(name)
	return ok
}

// Loggers returns every known logger with its effective Kafka level,
// root included (Kafka's Log4jController.loggers).
func (l *Levels) Loggers() map[string]string {
	s := l.cur.Load()
	out := map[string]string{Root: s.root}
	l.known.Range(func(k, _ any) bool {
		out[k.(string)] = s.levelOf(k.(string))
		return true
	})
	return out
}

// Names returns the known logger names, root first, then sorted.
func (l *Levels) Names() []string {
	var names []string
	l.known.Range(func(k, _ any) bool { names = append(names, k.(string)); return true })
	sort.Strings(names)
	return append([]string{Root}, names...)
}

// Level is the effective Kafka level of name (see the package comment).
func (l *Levels) Level(name string) string { return l.cur.Load().levelOf(name) }

// Set gives name its own level (Kafka name, validated by the caller);
// for Root it changes the level every logger without its own inherits.
func (l *Levels) Set(name, level string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.cur.Load()
	if name == Root || name == "" {
		l.cur.Store(newState(level, s.set))
		return
	}
	set := maps.Clone(s.set)
	set[name] = level
	l.Declare(name)
	l.cur.Store(newState(s.root, set))
}

// Unset removes name's own level: it inherits again (its nearest
// ancestor's, else root's). Root cannot be unset (a no-op here; the
// request validation refuses it).
func (l *Levels) Unset(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.cur.Load()
	if _, ok := s.set[name]; !ok {
		return
	}
	set := maps.Clone(s.set)
	delete(set, name)
	l.cur.Store(newState(s.root, set))
}

// Logger returns base with its core wrapped by the registry (Core); a
// base already wrapped by l is returned as it is.
func (l *Levels) Logger(base *zap.Logger) *zap.Logger {
	if c, ok := base.Core().(*core); ok && c.l == l {
		return base
	}
	return base.WithOptions(zap.WrapCore(l.Core))
}

// Core wraps inner so that an entry passes only when its logger's
// effective level enables it; every logger name seen becomes known.
func (l *Levels) Core(inner zapcore.Core) zapcore.Core { return &core{inner: inner, l: l} }

type core struct {
	inner zapcore.Core
	l     *Levels
}

// Enabled is the fast path zap checks before building an entry: true when
// some logger enables lvl (the entry's logger name is not known here).
func (c *core) Enabled(lvl zapcore.Level) bool {
	return lvl >= c.l.cur.Load().minLevel && c.inner.Enabled(lvl)
}

func (c *core) With(fields []zapcore.Field) zapcore.Core {
	return &core{inner: c.inner.With(fields), l: c.l}
}

func (c *core) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if ent.LoggerName != "" {
		if _, ok := c.l.known.Load(ent.LoggerName); !ok {
			c.l.known.Store(ent.LoggerName, struct{}{})
		}
	}
	if ent.Level < c.l.cur.Load().zapLevelOf(ent.LoggerName) {
		return ce
	}
	return c.inner.Check(ent, ce)
}

func (c *core) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	return c.inner.Write(ent, fields)
}

func (c *core) Sync() error { return c.inner.Sync() }
