#!/bin/sh
# Starts a broker: kafka-server-start.sh [-daemon] server.properties [--override k=v]
# With -daemon it runs in the background and, as Kafka's kafka-run-class.sh,
# writes its console output to $LOG_DIR/kafkaServer.out (LOG_DIR defaults to
# logs/ next to bin/). The file is appended to, never truncated: several
# brokers started from one checkout share it unless each gets its own
# LOG_DIR, and a restart keeps the previous run's log. The started PID and
# the log path are printed on stderr.
G=${GREGOR_BIN:-$(dirname "$0")/../gregor}; [ -x "$G" ] || G=gregor
if [ "$1" = "-daemon" ]; then
  shift
  LOG_DIR=${LOG_DIR:-$(dirname "$0")/../logs}
  mkdir -p "$LOG_DIR" || exit 1
  LOG_DIR=$(cd "$LOG_DIR" && pwd) || exit 1
  OUT="$LOG_DIR/kafkaServer.out"
  nohup "$G" server "$@" >>"$OUT" 2>&1 </dev/null &
  echo "Started gregor server, pid $!, log $OUT" >&2
  exit 0
fi
exec "$G" server "$@"
