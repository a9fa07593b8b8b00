#!/bin/sh
# zookeeper-server-stop.sh [zookeeper.properties]: sends SIGTERM to the
# ZooKeeper servers zookeeper-server-start.sh started (Kafka's script stops
# every QuorumPeerMain on the host; this one leaves ZooKeepers it did not
# start alone). With a config file, only the server started with it.
CFG=
if [ $# -gt 0 ]; then
  [ -r "$1" ] || { echo "$0: cannot read $1" >&2; exit 1; }
  CFG=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
fi
PIDS=$(ps ax -o pid= -o args= | awk -v cfg="$CFG" '
  /QuorumPeerMain/ {
    for (i = 2; i <= NF; i++) {
      if (index($i, "-Dgregor.zookeeper.config=") == 1 && (cfg == "" || substr($i, 27) == cfg)) { print $1; break }
    }
  }')
if [ -z "$PIDS" ]; then
  echo "No zookeeper server to stop"
  exit 1
fi
kill -s TERM $PIDS
