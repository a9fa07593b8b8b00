package main

// -mode security (`make bench-security`): what TLS and SASL cost. One
// Gregor single node serves a PLAINTEXT and a SASL_SSL listener (PKCS12
// keystore from keystoretest, SCRAM-SHA-512 user created with `gregor
// configs`); each run creates a fresh 3-partition topic through the
// PLAINTEXT listener, produces o.records records of o.size bytes to it and
// consumes them back over one listener, then deletes it. After one
// unmeasured round, runs alternate PLAINTEXT, SASL_SSL, PLAINTEXT,
// SASL_SSL, so drift on the shared machine
// (page cache, other work) falls on both sides alike. The broker's CPU
// (utime+stime) is read before and after the produce and after the consume:
// fetch over TLS cannot use sendfile, so the consume side's CPU per GB is
// where the copy path shows.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"gregor/test/bench/benchproc"
	"gregor/wire/security/keystore/keystoretest"
)

// secResult is one run over one listener. Rates in records/s, MB/s as the
// perf tools print them (MiB), CPU in broker CPU seconds per GB (1e9 B)
// of record values moved.
type secResult struct {
	produceRate, produceMB, produceCPU float64
	consumeRate, consumeMB, consumeCPU float64
}

// listener is one of the broker's listeners as the perf tools reach it:
// its address and, for SASL_SSL, the client.properties file.
type listener struct {
	name, addr, config string
}

// -mode security's defaults for -records and -rounds: about a minute on
// a 2-core VM.
const (
	securityRecordsDefault = 1000000
	securityRoundsDefault  = 5
)

// The benchmark's throw-away secrets (in its temporary directory only).
const (
	benchUser     = "bench"
	benchPassword = "bench-secret"
	storePassword = "bench-store"
)

func securityRounds(o opts) error {
	tmp, err := os.MkdirTemp("", "gregor-bench-security-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	b, plain, sasl, err := startSecureGregor(o, tmp)
	if err != nil {
		return err
	}
	defer b.stop()
	fmt.Printf("gregor single node: PLAINTEXT %s, SASL_SSL %s (SCRAM-SHA-512, PKCS12 keystore); %d records of %d B per run, 3 partitions, %s\n",
		plain.addr, sasl.addr, o.records, o.size, strings.Join(o.props, " "))
	// One unmeasured round first: the broker's first topics, the group
	// coordinator's load and heap growth would otherwise fall on round 1's
	// PLAINTEXT run alone.
	for _, l := range []listener{plain, sasl} {
		if _, err := securityRun(o, b, plain.addr, l, "warmup-"+strings.ToLower(l.name)); err != nil {
			return fmt.Errorf("%s warm-up: %w", l.name, err)
		}
	}
	res := map[string][]secResult{}
	for r := 1; r <= o.rounds; r++ {
		for _, l := range []listener{plain, sasl} {
			topic := fmt.Sprintf("perf-%d-%s", r, strings.ToLower(l.name))
			x, err := securityRun(o, b, plain.addr, l, topic)
			if err != nil {
				return fmt.Errorf("%s round %d: %w", l.name, r, err)
			}
			printSec(fmt.Sprintf("round %d", r), l.name, x)
			res[l.name] = append(res[l.name], x)
		}
	}
	med := map[string]secResult{}
	for _, name := range []string{plain.name, sasl.name} {
		rs := res[name]
		m := func(f func(secResult) float64) float64 {
			v := make([]float64, len(rs))
			for i, r := range rs {
				v[i] = f(r)
			}
			return medianOf(v)
		}
		med[name] = secResult{
			produceRate: m(func(r secResult) float64 { return r.produceRate }),
			produceMB:   m(func(r secResult) float64 { return r.produceMB }),
			produceCPU:  m(func(r secResult) float64 { return r.produceCPU }),
			consumeRate: m(func(r secResult) float64 { return r.consumeRate }),
			consumeMB:   m(func(r secResult) float64 { return r.consumeMB }),
			consumeCPU:  m(func(r secResult) float64 { return r.consumeCPU }),
		}
		printSec("median ", name, med[name])
	}
	s, p := med[sasl.name], med[plain.name]
	fmt.Printf("ratio SASL_SSL/PLAINTEXT: produce %.2fx  consume %.2fx  broker CPU per GB produce %.2fx  consume %.2fx\n",
		s.produceRate/p.produceRate, s.consumeRate/p.consumeRate, s.produceCPU/p.produceCPU, s.consumeCPU/p.consumeCPU)
	return nil
}

func printSec(label, name string, x secResult) {
	fmt.Printf("%s %-9s produce %9.0f records/s (%6.1f MB/s, broker CPU %5.2f s/GB)  consume %9.0f records/s (%6.1f MB/s, broker CPU %5.2f s/GB)\n",
		label, name, x.produceRate, x.produceMB, x.produceCPU, x.consumeRate, x.consumeMB, x.consumeCPU)
}

// startSecureGregor writes the certificates and the broker's config into
// dir, starts the broker, creates the SCRAM user through the PLAINTEXT
// listener and waits until that user can log in on the SASL_SSL one.
func startSecureGregor(o opts, dir string) (*broker, listener, listener, error) {
	var none listener
	ca, err := keystoretest.GenerateCA("bench-ca")
	if err != nil {
		return nil, none, none, err
	}
	srv, err := ca.IssueServer("bench-broker")
	if err != nil {
		return nil, none, none, err
	}
	keystore, err := srv.PKCS12(storePassword)
	if err != nil {
		return nil, none, none, err
	}
	truststore, err := ca.PKCS12Trust(storePassword)
	if err != nil {
		return nil, none, none, err
	}
	ksPath, tsPath := filepath.Join(dir, "broker.p12"), filepath.Join(dir, "truststore.p12")
	if err := os.WriteFile(ksPath, keystore, 0o600); err != nil {
		return nil, none, none, err
	}
	if err := os.WriteFile(tsPath, truststore, 0o600); err != nil {
		return nil, none, none, err
	}
	saslPort, err := benchproc.FreePort()
	if err != nil {
		return nil, none, none, err
	}
	s := side{name: "gregor", start: func(port int, dir string) (*exec.Cmd, error) {
		cfg := filepath.Join(dir, "server.properties")
		body := strings.Join([]string{
			"broker.id=0",
			fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,SASL_SSL://127.0.0.1:%d", port, saslPort),
			"log.dirs=" + filepath.Join(dir, "data"),
			"num.partitions=3",
			"offsets.topic.replication.factor=1",
			"group.initial.rebalance.delay.ms=0",
			"sasl.enabled.mechanisms=SCRAM-SHA-512",
			"ssl.keystore.type=PKCS12",
			"ssl.keystore.location=" + ksPath,
			"ssl.keystore.password=" + storePassword,
		}, "\n") + "\n"
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			return nil, err
		}
		return exec.Command(o.gregor, "server", cfg), nil
	}}
	b, err := start(s, dir)
	if err != nil {
		return nil, none, none, err
	}
	plain := listener{name: "PLAINTEXT", addr: b.addr}
	sasl := listener{name: "SASL_SSL", addr: fmt.Sprintf("127.0.0.1:%d", saslPort), config: filepath.Join(dir, "client.properties")}
	props := strings.Join([]string{
		"security.protocol=SASL_SSL",
		"sasl.mechanism=SCRAM-SHA-512",
		fmt.Sprintf(`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, benchUser, benchPassword),
		"ssl.truststore.type=PKCS12",
		"ssl.truststore.location=" + tsPath,
		"ssl.truststore.password=" + storePassword,
	}, "\n") + "\n"
	err = os.WriteFile(sasl.config, []byte(props), 0o600)
	if err == nil {
		err = createScramUser(o, plain.addr, sasl)
	}
	if err != nil {
		b.stop()
		return nil, none, none, err
	}
	return b, plain, sasl, nil
}

// createScramUser adds the SCRAM-SHA-512 credential with `gregor configs`
// (kafka-configs.sh's flags) and waits, bounded, until a tool logs in with
// it over SASL_SSL: the broker applies credentials from its store's change
// notification, and a process gives no event to wait on.
func createScramUser(o opts, plainAddr string, sasl listener) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := tool(ctx, o, "configs", "--bootstrap-server", plainAddr, "--entity-type", "users", "--entity-name", benchUser,
		"--alter", "--add-config", fmt.Sprintf("SCRAM-SHA-512=[password=%s]", benchPassword)); err != nil {
		return err
	}
	var err error
	for range 20 {
		cmd := exec.CommandContext(ctx, o.gregor, "topics", "--bootstrap-server", sasl.addr, "--command-config", sasl.config, "--list")
		var out []byte
		if out, err = cmd.CombinedOutput(); err == nil {
			return nil
		}
		err = fmt.Errorf("%w: %s", err, out)
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("SCRAM user %s cannot log in on %s: %w", benchUser, sasl.addr, err)
}

// securityRun is one run over l: a fresh topic (created and deleted over
// the PLAINTEXT listener, outside the measurement), produce, consume.
func securityRun(o opts, b *broker, plainAddr string, l listener, topic string) (secResult, error) {
	if err := createTopic(plainAddr, topic); err != nil {
		return secResult{}, err
	}
	defer deleteTopic(plainAddr, topic)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	pid := b.proc.Pid()
	cpu0, err := benchproc.CPUSeconds(pid)
	if err != nil {
		return secResult{}, err
	}
	n := strconv.FormatInt(o.records, 10)
	pargs := append([]string{"--num-records", n, "--throughput", "-1", "--producer-props", "bootstrap.servers=" + l.addr}, o.props...)
	cargs := []string{"--bootstrap-server", l.addr}
	if l.config != "" {
		pargs = append(pargs, "--producer.config", l.config)
		cargs = append(cargs, "--consumer.config", l.config)
	}
	p, err := produce(ctx, o, topic, pargs...)
	if err != nil {
		return secResult{}, err
	}
	if p.records != o.records {
		return secResult{}, fmt.Errorf("only %d of %d records acknowledged", p.records, o.records)
	}
	cpu1, err := benchproc.CPUSeconds(pid)
	if err != nil {
		return secResult{}, err
	}
	c, err := consume(ctx, o, topic, cargs...)
	if err != nil {
		return secResult{}, err
	}
	cpu2, err := benchproc.CPUSeconds(pid)
	if err != nil {
		return secResult{}, err
	}
	gb := float64(o.records) * float64(o.size) / 1e9
	return secResult{
		produceRate: p.rate, produceMB: p.mb, produceCPU: (cpu1 - cpu0) / gb,
		consumeRate: c.rate, consumeMB: c.mb, consumeCPU: (cpu2 - cpu1) / gb,
	}, nil
}

// deleteTopic removes a run's topic so the runs after it do not share the
// disk and page cache with its segments. A failure is reported, not fatal:
// the next run has its own topic.
func deleteTopic(addr, topic string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		var resp kadm.DeleteTopicResponses
		resp, err = kadm.NewClient(cl).DeleteTopics(ctx, topic)
		if err == nil {
			err = resp.Error()
		}
		cancel()
		cl.Close()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "compare: deleting %s: %v\n", topic, err)
	}
}
