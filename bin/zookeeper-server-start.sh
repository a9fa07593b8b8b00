#!/bin/sh
# zookeeper-server-start.sh [-daemon] zookeeper.properties: runs a ZooKeeper
# server (Debian's zookeeper package: /usr/share/java/zookeeper.jar, its
# QuorumPeerMain) with the config, as Kafka's script does. With -daemon it
# runs in the background with its output appended to $LOG_DIR/zookeeper.out
# (LOG_DIR defaults to logs/ next to bin/); the PID and log are printed on
# stderr. KAFKA_HEAP_OPTS (default -Xmx512M -Xms512M) and KAFKA_OPTS are
# passed to java. ZOOKEEPER_JAR overrides the jar's path.
JAR=${ZOOKEEPER_JAR:-/usr/share/java/zookeeper.jar}
SLF4J=/usr/share/java/slf4j-simple.jar
if [ $# -lt 1 ]; then
  echo "USAGE: $0 [-daemon] zookeeper.properties" >&2
  exit 1
fi
DAEMON=
if [ "$1" = "-daemon" ]; then
  DAEMON=1
  shift
fi
if [ $# -ne 1 ]; then
  echo "USAGE: $0 [-daemon] zookeeper.properties" >&2
  exit 1
fi
if [ ! -f "$JAR" ] || ! command -v java >/dev/null 2>&1; then
  echo "$0: ZooKeeper is not installed ($JAR or java missing): install the zookeeper package (apt-get install zookeeper)" >&2
  exit 1
fi
if [ ! -r "$1" ]; then
  echo "$0: cannot read $1" >&2
  exit 1
fi
CFG=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
CP=$JAR
[ -f "$SLF4J" ] && CP=$CP:$SLF4J
HEAP=${KAFKA_HEAP_OPTS:--Xmx512M -Xms512M}
# -Dgregor.zookeeper.config marks the process for zookeeper-server-stop.sh,
# which stops only servers started here (never another ZooKeeper on the host).
set -- $HEAP $KAFKA_OPTS -Dorg.slf4j.simpleLogger.defaultLogLevel=info \
  "-Dgregor.zookeeper.config=$CFG" -cp "$CP" org.apache.zookeeper.server.quorum.QuorumPeerMain "$CFG"
if [ -n "$DAEMON" ]; then
  LOG_DIR=${LOG_DIR:-$(dirname "$0")/../logs}
  mkdir -p "$LOG_DIR" || exit 1
  LOG_DIR=$(cd "$LOG_DIR" && pwd) || exit 1
  OUT="$LOG_DIR/zookeeper.out"
  nohup java "$@" >>"$OUT" 2>&1 </dev/null &
  echo "Started zookeeper, pid $!, log $OUT" >&2
  exit 0
fi
exec java "$@"
