#!/bin/sh
G=${GREGOR_BIN:-$(dirname "$0")/../gregor}; [ -x "$G" ] || G=gregor
exec "$G" broker-api-versions "$@"
