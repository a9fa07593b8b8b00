#!/bin/sh
# zookeeper-shell.sh host:port[/chroot] [command args…]: Debian's ZooKeeper
# CLI (zkCli.sh of the zookeeper package) connected to the server; with a
# command it runs it and exits, else it is interactive. ZKCLI overrides the
# CLI's path.
ZKCLI=${ZKCLI:-/usr/share/zookeeper/bin/zkCli.sh}
if [ $# -lt 1 ]; then
  echo "USAGE: $0 zookeeper_host:port[/path] [args...]" >&2
  exit 1
fi
if [ "$2" = "-zk-tls-config-file" ]; then
  echo "$0: -zk-tls-config-file is not supported (TLS to ZooKeeper is not available)" >&2
  exit 1
fi
if [ ! -x "$ZKCLI" ]; then
  echo "$0: ZooKeeper's CLI is not installed ($ZKCLI missing): install the zookeeper package (apt-get install zookeeper)" >&2
  exit 1
fi
SERVER=$1
shift
exec "$ZKCLI" -server "$SERVER" "$@"
