#!/bin/sh
# Starts a broker: kafka-server-start.sh [-daemon] server.properties [--override k=v]
# With -daemon it runs in the background and, as Kafka's kafka-run-class.sh,
# writes its console output to $LOG_DIR/kafkaServer.out (LOG_DIR defaults to
# logs/ next to bin/).
G=${GREGOR_BIN:-$(dirname "$0")/../gregor}; [ -x "$G" ] || G=gregor
if [ "$1" = "-daemon" ]; then
  shift
  LOG_DIR=${LOG_DIR:-$(dirname "$0")/../logs}
  mkdir -p "$LOG_DIR" || exit 1
  nohup "$G" server "$@" >"$LOG_DIR/kafkaServer.out" 2>&1 </dev/null &
  exit 0
fi
exec "$G" server "$@"
