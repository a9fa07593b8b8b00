# Gregor — a Kafka-compatible commit log in one Go binary.
#   make run    single node on 127.0.0.1:9092, embedded metadata, data under ./data;
#               ARGS='--override key=value …' overrides server.properties keys
#               (a second node: listeners, admin.listener and log.dirs of its own)
#   make test   installs what the tests need if it is missing, then runs every test with -race
#   make bench  benchmarks (loopback only, bounded)
#   make bench-compare  Gregor vs kfake, throughput, CPU per GB and end-to-end p99
#   make bench-security produce/consume over SASL_SSL vs PLAINTEXT on one node, ratios
#   make bench-scale    issue 13's figures: 20,000 partitions on one node, 10,000 RF 3 on 3 brokers, PASS/FAIL
#   make chaos DURATION=10m  faults against a 3-broker cluster, then a loss check

GO        ?= go
BIN       ?= gregor
TESTFLAGS ?= -race -count=1 -timeout 40m

.PHONY: build run test test-deps bench bench-compare bench-security bench-scale vet clean

build:
	$(GO) build -o $(BIN) ./cmd/gregor

# ARGS: arguments after the properties file, as `gregor server` (and
# kafka-server-start.sh) take them: --override key=value, repeatable.
ARGS ?=

run: build
	./$(BIN) server config/server.properties $(ARGS)

# test-deps installs the external clients the tests drive (kcat, kafka-python)
# and ZooKeeper, when they are missing and we may install them.
test-deps:
	@test/install-deps.sh

test: test-deps build
	$(GO) vet ./...
	$(GO) test $(TESTFLAGS) ./...

bench: build
	$(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./...

# bench-compare: Gregor vs franz-go's kfake (as a process), A B A B, medians
# and ratios of produce/consume records/s and broker CPU s/GB, then the
# end-to-end (producer send to consumer receive) acks=all p99 at 10,000
# records/s, A B A B; PASS/FAIL against each bar (test/bench/compare).
bench-compare: build
	$(GO) build -o $${TMPDIR:-/tmp}/gregor-bench-kfakeserver ./test/bench/kfakeserver
	$(GO) run ./test/bench/compare -gregor ./$(BIN) -kfake $${TMPDIR:-/tmp}/gregor-bench-kfakeserver $(BENCHFLAGS)

# bench-security: one Gregor single node with a PLAINTEXT and a SASL_SSL
# listener (SCRAM-SHA-512 user made with `gregor configs`, PKCS12 keystore
# made on the fly), a fresh topic per run, A B A B after a warm-up round;
# medians of produce/consume records/s, MB/s and broker CPU s/GB per
# listener and the SASL_SSL/PLAINTEXT ratios (test/bench/compare -mode
# security). About a minute on 2 cores; BENCHFLAGS='-records 300000
# -rounds 3' for less.
bench-security: build
	$(GO) run ./test/bench/compare -mode security -gregor ./$(BIN) $(BENCHFLAGS)

# bench-scale: issue 13's figures for the binary built here (or another:
# BENCHFLAGS='-gregor /path/to/gregor'), each against its bar, PASS/FAIL
# (test/bench/scale). Zero-config single node (config/server.properties
# overlaid with free ports and a fresh data dir): 20,000 partitions
# created and led, clean and kill -9 restarts, full Metadata latency, one
# acks=all record per partition, RSS per idle partition, open fds. Three
# brokers on ZooKeeper: 10,000 partitions RF 3 created and led, SIGTERM
# of a non-controller (controlled shutdown), kill -9 of the controller.
# Each step is abandoned at 3x its bar, so a failing run ends in about
# 10 minutes. BENCHFLAGS: -partitions, -cluster-partitions, -single,
# -cluster, -steps (creation/restart/Metadata at 1k, 5k, 10k, 20k),
# -profile-dir DIR (broker CPU profile during creation), -keep DIR.
bench-scale: build
	$(GO) run ./test/bench/scale -gregor ./$(BIN) $(BENCHFLAGS)

# chaos: TestChaos (test/chaos) with faults for DURATION (default 2m):
# actor kills through the admin listeners (transaction coordinators
# included) and broker SIGKILL/restart under an acks=all producer, a group
# consumer and a transactional consume-transform-produce pipeline, then
# every replica's log is checked and the pipeline's read_committed output
# must hold each input exactly once; prints one "chaos summary:" line and
# fails on any loss or duplicate.
# `make test` runs the same test with a 60 s fault phase.
DURATION      ?= 2m
CHAOS_TIMEOUT ?= 3h
.PHONY: chaos
chaos: test-deps
	$(GO) test -race -count=1 -timeout $(CHAOS_TIMEOUT) -run '^TestChaos$$' -v ./test/chaos -args -chaos.duration=$(DURATION)

clean:
	rm -f $(BIN)
