package integration

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
)

// Dynamic broker configs (KIP-226) against a real broker process, through
// kadm and bin/kafka-configs.sh.

// brokerConfig describes one broker config of resource ("" = <default>).
func brokerConfig(ctx context.Context, t *testing.T, adm *kadm.Client, id int32, name string) (kadm.Config, bool) {
	t.Helper()
	var rcs kadm.ResourceConfigs
	var err error
	if id < 0 {
		rcs, err = adm.DescribeBrokerConfigs(ctx)
	} else {
		rcs, err = adm.DescribeBrokerConfigs(ctx, id)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range rcs {
		if rc.Err != nil {
			t.Fatalf("describe %s: %v %s", rc.Name, rc.Err, rc.ErrMessage)
		}
		for _, c := range rc.Configs {
			if c.Key == name {
				return c, true
			}
		}
	}
	return kadm.Config{}, false
}

// awaitSource polls broker 0's config name until its source is src (the
// change notification has been applied: describe shows the layers in force).
func awaitSource(ctx context.Context, t *testing.T, adm *kadm.Client, name string, src kmsg.ConfigSource, value string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, _ := brokerConfig(ctx, t, adm, 0, name)
		if c.Source == src && c.Value != nil && *c.Value == value {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: source %v value %v, want %v %s", name, c.Source, c.Value, src, value)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func binScriptStatus(t *testing.T, script string, args ...string) (string, int) {
	t.Helper()
	t.Setenv("GREGOR_BIN", harness.Binary(t))
	cmd := exec.Command(filepath.Join(harness.RepoRoot(), "bin", script), args...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// TestDynamicRetentionDefault: log.retention.ms set as the cluster-wide
// default with kafka-configs --entity-default deletes old records of a
// topic without an override, without a restart; a topic with its own
// retention.ms keeps them.
func TestDynamicRetentionDefault(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"log.retention.check.interval.ms": "200", "log.segment.bytes": "1024", "log.segment.delete.delay.ms": "0"})
	keep := "3600000"
	createTopic(t, b, "plain", 1, nil)
	createTopic(t, b, "kept", 1, map[string]*string{"retention.ms": &keep})
	cl := b.Client()
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	val := strings.Repeat("x", 300)
	for i := 0; i < 20; i++ { // several segments per topic
		for _, topic := range []string{"plain", "kept"} {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte(val)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	adm := kadm.NewClient(cl)
	startOf := func(topic string) int64 {
		offs, err := adm.ListStartOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := offs.Lookup(topic, 0)
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		return o.Offset
	}
	time.Sleep(1500 * time.Millisecond) // the records must be older than the new retention
	if s := startOf("plain"); s != 0 {
		t.Fatalf("records deleted before the change (start offset %d)", s)
	}
	out := binScript(t, "", "kafka-configs.sh", "--bootstrap-server", b.Addr(), "--entity-type", "brokers", "--entity-default",
		"--alter", "--add-config", "log.retention.ms=1000")
	if strings.TrimSpace(out) != "Completed updating default config for brokers in the cluster." {
		t.Fatalf("output %q", out)
	}
	// ListOffsets earliest moves as retention deletes the segments, with
	// nothing produced after the change (the partition publishes its new
	// log start offset after each retention pass that deleted segments).
	deadline := time.Now().Add(30 * time.Second)
	for startOf("plain") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the new default retention deleted nothing\n%s", b.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Every record is past retention: as in Kafka the active segment goes
	// too (the log rolls an empty one), so the log starts at its end.
	for startOf("plain") != 20 {
		if time.Now().After(deadline) {
			t.Fatalf("retention kept the active segment: start offset %d, want 20\n%s", startOf("plain"), b.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s := startOf("kept"); s != 0 {
		t.Fatalf("the topic with its own retention.ms lost records (start offset %d)", s)
	}
	// The topic without an override describes the new default.
	rcs, err := adm.DescribeTopicConfigs(ctx, "plain")
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := rcs.On("plain", nil)
	found := false
	for _, c := range rc.Configs {
		if c.Key == "retention.ms" {
			found = true
			if c.Value == nil || *c.Value != "1000" || c.Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
				t.Fatalf("retention.ms of plain = %v source %v, want 1000 DYNAMIC_DEFAULT_BROKER_CONFIG", c.Value, c.Source)
			}
			if len(c.Synonyms) == 0 || c.Synonyms[0].Key != "log.retention.ms" || c.Synonyms[0].Source != kmsg.ConfigSourceDynamicDefaultBrokerConfig {
				t.Fatalf("retention.ms synonyms %+v", c.Synonyms)
			}
		}
	}
	if !found {
		t.Fatal("retention.ms not described")
	}
}

// TestDynamicConnectionsPerIP: max.connections.per.ip set at run time
// refuses a flood of new connections from 127.0.0.1 while an existing
// consumer keeps consuming what is produced during the flood; raising the
// limit lets new connections in.
func TestDynamicConnectionsPerIP(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "flood", 1, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	prod := b.Client()
	defer prod.Close()
	cons := b.Client(kgo.ConsumeTopics("flood"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cons.Close()
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "flood", Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pollRecords(ctx, t, cons, 1, "consumer")
	adm := kadm.NewClient(prod)

	v := "12"
	resps, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "max.connections.per.ip", Value: &v}}, 0)
	if err != nil || resps[0].Err != nil {
		t.Fatalf("alter: %v %v", err, resps)
	}
	awaitSource(ctx, t, adm, "max.connections.per.ip", kmsg.ConfigSourceDynamicBrokerConfig, "12")

	served := func(c net.Conn) bool {
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write(kmsg.NewRequestFormatter().AppendRequest(nil, kmsg.NewPtrApiVersionsRequest(), 1)); err != nil {
			return false
		}
		var sz [4]byte
		if _, err := io.ReadFull(c, sz[:]); err != nil {
			return false
		}
		_, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(sz[:])))
		return err == nil
	}
	// Produce during the flood; the consumer must see every record.
	var wg sync.WaitGroup
	wg.Add(1)
	produced := 0
	go func() {
		defer wg.Done()
		for i := 0; i < 20; i++ {
			if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "flood", Value: []byte("during")}).FirstErr(); err != nil {
				t.Error(err)
				return
			}
			produced++
		}
	}()
	var flood []net.Conn
	refused := 0
	for i := 0; i < 40; i++ {
		c, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		flood = append(flood, c)
		if !served(c) {
			refused++
		}
	}
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	wg.Wait()
	if refused < 28 { // at most 12 connections from 127.0.0.1, the clients' among them
		t.Fatalf("%d of 40 flood connections refused, want at least 28", refused)
	}
	pollRecords(ctx, t, cons, produced, "consumer during the flood")
	if !strings.Contains(b.Log(), "max.connections.per.ip") {
		t.Fatal("refusals not logged")
	}

	v = "1000"
	if _, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "max.connections.per.ip", Value: &v}}, 0); err != nil {
		t.Fatal(err)
	}
	awaitSource(ctx, t, adm, "max.connections.per.ip", kmsg.ConfigSourceDynamicBrokerConfig, "1000")
	c, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !served(c) {
		t.Fatal("a new connection is refused after raising the limit")
	}
}

// TestDynamicDescribeSourcesAndRefusals: per-broker over default over
// static, as kadm sees the sources and synonyms and as kafka-configs.sh
// prints them; read-only, unknown and bad values are refused with
// INVALID_CONFIG and write nothing; message.max.bytes changed at run time
// refuses a record it accepted before.
func TestDynamicDescribeSourcesAndRefusals(t *testing.T) {
	b := harness.StartBroker(t, map[string]string{"max.connections": "1000"})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl := b.Client()
	defer cl.Close()
	adm := kadm.NewClient(cl)
	set := func(id int32, name, value string) kadm.AlterConfigsResponse {
		ops := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: name, Value: &value}}
		var rs kadm.AlterConfigsResponses
		var err error
		if id < 0 {
			rs, err = adm.AlterBrokerConfigs(ctx, ops)
		} else {
			rs, err = adm.AlterBrokerConfigs(ctx, ops, id)
		}
		if err != nil {
			t.Fatal(err)
		}
		return rs[0]
	}
	if r := set(-1, "max.connections", "900"); r.Err != nil {
		t.Fatal(r.Err, r.ErrMessage)
	}
	awaitSource(ctx, t, adm, "max.connections", kmsg.ConfigSourceDynamicDefaultBrokerConfig, "900")
	if r := set(0, "max.connections", "800"); r.Err != nil {
		t.Fatal(r.Err, r.ErrMessage)
	}
	awaitSource(ctx, t, adm, "max.connections", kmsg.ConfigSourceDynamicBrokerConfig, "800")
	c, _ := brokerConfig(ctx, t, adm, 0, "max.connections")
	var syn []string
	for _, s := range c.Synonyms {
		syn = append(syn, s.Source.String()+":"+s.Key+"="+*s.Value)
	}
	want := "DYNAMIC_BROKER_CONFIG:max.connections=800 DYNAMIC_DEFAULT_BROKER_CONFIG:max.connections=900 STATIC_BROKER_CONFIG:max.connections=1000 DEFAULT_CONFIG:max.connections=2147483647"
	if strings.Join(syn, " ") != want {
		t.Fatalf("synonyms %v\nwant %s", syn, want)
	}
	if id, _ := brokerConfig(ctx, t, adm, 0, "broker.id"); id.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("broker.id %+v", id)
	}
	out := binScript(t, "", "kafka-configs.sh", "--bootstrap-server", b.Addr(), "--entity-type", "brokers", "--entity-name", "0", "--describe")
	if out != "Dynamic configs for broker 0 are:\n  max.connections=800 sensitive=false synonyms={"+
		"DYNAMIC_BROKER_CONFIG:max.connections=800, DYNAMIC_DEFAULT_BROKER_CONFIG:max.connections=900, STATIC_BROKER_CONFIG:max.connections=1000, DEFAULT_CONFIG:max.connections=2147483647}\n" {
		t.Fatalf("describe output:\n%s", out)
	}
	out = binScript(t, "", "kafka-configs.sh", "--bootstrap-server", b.Addr(), "--entity-type", "brokers", "--entity-default", "--describe")
	if out != "Default configs for brokers in the cluster are:\n  max.connections=900 sensitive=false synonyms={"+
		"DYNAMIC_DEFAULT_BROKER_CONFIG:max.connections=900, STATIC_BROKER_CONFIG:max.connections=1000, DEFAULT_CONFIG:max.connections=2147483647}\n" {
		t.Fatalf("default describe output:\n%s", out)
	}

	// Refusals: INVALID_CONFIG with Kafka's message; nothing written.
	for _, c := range []struct{ name, value, want string }{
		{"broker.id", "7", "Cannot update these configs dynamically: Set(broker.id)"},
		{"log.retention.hours", "1", "Cannot update these configs dynamically: Set(log.retention.hours)"},
		{"no.such.config", "1", "Unknown broker configs: Set(no.such.config)"},
		{"log.retention.ms", "soon", "log.retention.ms"},
	} {
		r := set(0, c.name, c.value)
		if !errors.Is(r.Err, kerr.InvalidConfig) || !strings.Contains(r.ErrMessage, c.want) ||
			!strings.HasPrefix(r.ErrMessage, "Invalid config value for resource ConfigResource(type=BROKER, name='0'): ") {
			t.Errorf("%s=%s: %v %q, want INVALID_CONFIG %q", c.name, c.value, r.Err, r.ErrMessage, c.want)
		}
	}
	other := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeBroker, "5"
	res.Configs = append(res.Configs, kmsg.IncrementalAlterConfigsRequestResourceConfig{Name: "max.connections", Value: kmsg.StringPtr("1")})
	other.Resources = append(other.Resources, res)
	if resp, err := other.RequestWith(ctx, cl.Broker(0)); err != nil || resp.Resources[0].ErrorCode != kerr.InvalidRequest.Code ||
		*resp.Resources[0].ErrorMessage != "Unexpected broker id, expected 0, but received 5" {
		t.Errorf("another broker id: %v %+v", err, resp)
	}
	if c, _ := brokerConfig(ctx, t, adm, 0, "max.connections"); *c.Value != "800" {
		t.Fatalf("a refused alter changed max.connections to %s", *c.Value)
	}
	out, code := binScriptStatus(t, "kafka-configs.sh", "--bootstrap-server", b.Addr(), "--entity-type", "brokers", "--entity-name", "0", "--alter", "--add-config", "log.dirs=/tmp/x")
	if code == 0 || !strings.Contains(out, "Cannot update these configs dynamically: Set(log.dirs)") {
		t.Fatalf("kafka-configs refused alter: exit %d\n%s", code, out)
	}

	// message.max.bytes at run time: a 3000-byte record passes, then is too large.
	createTopic(t, b, "sized", 1, nil)
	payload := make([]byte, 3000) // random: compression must not shrink it below the limit
	rand.Read(payload)
	big := &kgo.Record{Topic: "sized", Value: payload}
	if err := cl.ProduceSync(ctx, big).FirstErr(); err != nil {
		t.Fatal(err)
	}
	out = binScript(t, "", "kafka-configs.sh", "--bootstrap-server", b.Addr(), "--broker", "0", "--alter", "--add-config", "message.max.bytes=2000")
	if strings.TrimSpace(out) != "Completed updating config for broker 0." {
		t.Fatalf("output %q", out)
	}
	awaitSource(ctx, t, adm, "message.max.bytes", kmsg.ConfigSourceDynamicBrokerConfig, "2000")
	deadline := time.Now().Add(20 * time.Second)
	for {
		big := &kgo.Record{Topic: "sized", Value: payload}
		err := cl.ProduceSync(ctx, big).FirstErr()
		if errors.Is(err, kerr.MessageTooLarge) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("3000-byte record after message.max.bytes=2000: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
