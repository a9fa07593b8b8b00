#!/usr/bin/env bash
# Installs what the integration tests drive from outside Go: kcat
# (librdkafka), kafka-python (Debian's python3-kafka, run with
# /usr/bin/python3), confluent-kafka-python (python3-confluent-kafka)
# ZooKeeper with a JRE, and Burrow. Does nothing when they are present; warns
# (and the tests that need them skip) when they are missing and we cannot
# install them (not root, no apt-get).
set -euo pipefail
missing=()
command -v kcat >/dev/null 2>&1 || missing+=(kcat)
/usr/bin/python3 -c 'import kafka' >/dev/null 2>&1 || missing+=(python3-kafka)
# librdkafka's transactional producer and read_committed consumer.
/usr/bin/python3 -c 'import confluent_kafka' >/dev/null 2>&1 || missing+=(python3-confluent-kafka)
# kafka-python's codecs (test/compat): snappy, lz4 frames, zstd.
/usr/bin/python3 -c 'import snappy' >/dev/null 2>&1 || missing+=(python3-snappy)
/usr/bin/python3 -c 'import lz4.frame' >/dev/null 2>&1 || missing+=(python3-lz4)
# xxhash: kafka-python's LZ4 for message format v0 (its pre-0.10 header checksum).
/usr/bin/python3 -c 'import xxhash' >/dev/null 2>&1 || missing+=(python3-xxhash)
/usr/bin/python3 -c 'import zstandard' >/dev/null 2>&1 || missing+=(python3-zstandard)
[ -f /usr/share/java/zookeeper.jar ] || missing+=(zookeeper)
# Burrow 1.2 (LinkedIn's lag checker of the seeds' era: Sarama at 0.10.0).
command -v Burrow >/dev/null 2>&1 || missing+=(burrow)
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "warning: missing ${missing[*]} and cannot install them (need root and apt-get); tests that use them will skip" >&2
  exit 0
fi
echo "installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
