package config

import (
	"flag"
	"os"
	"sort"
	"strings"
	"testing"

	"go.uber.org/zap/zapcore"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite config/README.md's table of ignored keys from ignoredKeys")

const (
	ignoredHeading = "## Keys accepted but not acted on (yet)"
	ignoredHeader  = "| key | why it has no effect in Gregor |\n|---|---|\n"
)

// readmeReason is the README's second column for a key.
func readmeReason(why string) string {
	if why == notKafka3 {
		return "not a Kafka 3.9 broker config: Kafka's warning \"The configuration '…' was supplied but isn't a known config.\""
	}
	return why
}

func ignoredTable() string {
	keys := make([]string, 0, len(ignoredKeys))
	for k := range ignoredKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	sb.WriteString(ignoredHeader)
	for _, k := range keys {
		sb.WriteString("| " + k + " | " + readmeReason(ignoredKeys[k]) + " |\n")
	}
	return sb.String()
}

// README.md's table of ignored keys is ignoredKeys (after every file's init
// removed the keys it applies), row for row: go test ./config -run
// TestIgnoredKeysREADME -update-readme rewrites it.
func TestIgnoredKeysREADME(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	h := strings.Index(doc, ignoredHeading)
	if h < 0 {
		t.Fatalf("README.md has no %q section", ignoredHeading)
	}
	start := strings.Index(doc[h:], ignoredHeader)
	if start < 0 {
		t.Fatalf("README.md's %q section has no table %q", ignoredHeading, ignoredHeader)
	}
	start += h
	end := start + len(ignoredHeader)
	for end < len(doc) && doc[end] == '|' {
		nl := strings.IndexByte(doc[end:], '\n')
		if nl < 0 {
			end = len(doc)
			break
		}
		end += nl + 1
	}
	want := ignoredTable()
	if got := doc[start:end]; got != want {
		if *updateREADME {
			if err := os.WriteFile("README.md", []byte(doc[:start]+want+doc[end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("README.md's table of ignored keys differs from ignoredKeys (run with -update-readme); want:\n%s", want)
	}
}

// Every ignored key present warns once with its reason, Kafka's own text for
// keys Kafka 3.9 does not know; Broker.IgnoredKeys lists them; applied keys
// and absent ones do not warn.
func TestIgnoredKeysWarn(t *testing.T) {
	path := writeProps(t, "broker.id=3\nbackground.threads=10\nreplica.lag.max.messages=4000\n"+
		"log.dir.failure.timeout.ms=30000\nnum.partitions=2\nmetrics.num.samples=7331\n")
	b, logs := mustLoad(t, path)
	got := map[string]string{}
	for _, e := range logs.FilterLevelExact(zapcore.WarnLevel).All() {
		k := e.ContextMap()["key"].(string)
		if _, dup := got[k]; dup {
			t.Errorf("%s warned twice", k)
		}
		got[k] = e.Message
		if strings.Contains(e.Message, "7331") || strings.Contains(strings.Join(mapValues(e.ContextMap()), " "), "7331") {
			t.Errorf("a value was logged (values are never logged: some keys hold secrets): %s %v", e.Message, e.ContextMap())
		}
	}
	if logs.Len() != 4 || len(got) != 4 {
		t.Fatalf("want 4 WARN lines, got %v", logs.All())
	}
	if m := got["replica.lag.max.messages"]; m != "The configuration 'replica.lag.max.messages' was supplied but isn't a known config." {
		t.Errorf("replica.lag.max.messages: %q", m)
	}
	if m := got["log.dir.failure.timeout.ms"]; !strings.Contains(m, "Kafka 3.9 in ZooKeeper mode ignores it too") {
		t.Errorf("log.dir.failure.timeout.ms: %q", m)
	}
	if m := got["background.threads"]; !strings.HasPrefix(m, "The configuration 'background.threads' was supplied but has no effect in Gregor: ") || !strings.Contains(m, "actor timers") {
		t.Errorf("background.threads: %q", m)
	}
	var keys []string
	for _, k := range b.IgnoredKeys() {
		keys = append(keys, k.Key)
		if k.Reason == "" {
			t.Errorf("%s: no reason", k.Key)
		}
	}
	if strings.Join(keys, ",") != "background.threads,log.dir.failure.timeout.ms,metrics.num.samples,replica.lag.max.messages" {
		t.Errorf("IgnoredKeys = %v", keys)
	}
}

// No key is both applied and listed as ignored, and every reason is set.
func TestIgnoredKeysDisjoint(t *testing.T) {
	for k, why := range ignoredKeys {
		if _, ok := brokerKeys[k]; ok {
			t.Errorf("%s is applied (brokerKeys) and listed in ignoredKeys: delete it from ignoredKeys in the init that adds it", k)
		}
		if why == "" {
			t.Errorf("%s: empty reason", k)
		}
	}
}

func mapValues(m map[string]interface{}) []string {
	var out []string
	for _, v := range m {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
