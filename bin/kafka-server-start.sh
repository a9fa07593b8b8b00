#!/bin/sh
G=${GREGOR_BIN:-$(dirname "$0")/../gregor}; [ -x "$G" ] || G=gregor; [ "$1" = "-daemon" ] && { shift; nohup "$G" server "$@" >/dev/null 2>&1 & exit 0; }
exec "$G" server "$@"
