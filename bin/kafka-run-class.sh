#!/bin/sh
# kafka-run-class.sh <class> [args…]: runs the gregor subcommand that is the
# Kafka tool class named (the classes of the 0.8-3.x scripts, old kafka.*
# and new org.apache.kafka.tools.* names), as Kafka's script runs the JVM
# on it. A class Gregor has no counterpart for fails as java does.
G=${GREGOR_BIN:-$(dirname "$0")/../gregor}; [ -x "$G" ] || G=gregor
if [ $# -lt 1 ]; then
  echo "USAGE: $0 classname [opts]" >&2
  exit 1
fi
case "$1" in
  -daemon|-name|-loggc)
    echo "kafka-run-class.sh: $1 is not supported; run the tool's bin/ script (kafka-server-start.sh -daemon for a background broker)" >&2
    exit 1 ;;
esac
class=$1
shift
case "$class" in
  kafka.Kafka) sub=server ;;
  kafka.tools.GetOffsetShell|org.apache.kafka.tools.GetOffsetShell) sub=get-offsets ;;
  kafka.tools.DumpLogSegments|org.apache.kafka.tools.DumpLogSegments) sub=dump-log ;;
  kafka.admin.ConsumerGroupCommand|org.apache.kafka.tools.consumer.group.ConsumerGroupCommand) sub=consumer-groups ;;
  kafka.admin.TopicCommand|org.apache.kafka.tools.TopicCommand) sub=topics ;;
  kafka.admin.ConfigCommand) sub=configs ;;
  kafka.admin.ReassignPartitionsCommand|org.apache.kafka.tools.reassign.ReassignPartitionsCommand) sub=reassign-partitions ;;
  kafka.admin.AclCommand) sub=acls ;;
  kafka.admin.DeleteRecordsCommand|org.apache.kafka.tools.DeleteRecordsCommand) sub=delete-records ;;
  kafka.admin.LogDirsCommand|org.apache.kafka.tools.LogDirsCommand) sub=log-dirs ;;
  kafka.admin.BrokerApiVersionsCommand) sub=broker-api-versions ;;
  kafka.admin.LeaderElectionCommand|org.apache.kafka.tools.LeaderElectionCommand) sub=leader-election ;;
  kafka.admin.PreferredReplicaLeaderElectionCommand) sub=preferred-replica-election ;;
  kafka.tools.ConsoleProducer|org.apache.kafka.tools.ConsoleProducer) sub=console-producer ;;
  kafka.tools.ConsoleConsumer|org.apache.kafka.tools.consumer.ConsoleConsumer) sub=console-consumer ;;
  kafka.tools.ProducerPerformance|org.apache.kafka.tools.ProducerPerformance) sub=producer-perf-test ;;
  kafka.tools.ConsumerPerformance|org.apache.kafka.tools.ConsumerPerformance) sub=consumer-perf-test ;;
  kafka.tools.ReplayLogProducer) sub=replay-log-producer ;;
  org.apache.kafka.tools.TransactionsCommand) sub=transactions ;;
  kafka.tools.VerifiableProducer|org.apache.kafka.tools.VerifiableProducer) sub=verifiable-producer ;;
  kafka.tools.VerifiableConsumer|org.apache.kafka.tools.VerifiableConsumer) sub=verifiable-consumer ;;
  *)
    echo "Error: Could not find or load main class $class" >&2
    echo "Caused by: java.lang.ClassNotFoundException: $class" >&2
    exit 1 ;;
esac
exec "$G" "$sub" "$@"
