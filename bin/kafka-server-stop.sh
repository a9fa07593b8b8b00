#!/bin/sh
# Sends SIGTERM to every running `gregor server` (controlled shutdown), as Kafka's script does for kafka.Kafka.
P=$(ps ax -o pid= -o args= | awk '$2 ~ /(^|\/)gregor$/ && $3 == "server" {print $1}'); [ -n "$P" ] || { echo "No gregor server to stop"; exit 1; }; kill -s TERM $P
