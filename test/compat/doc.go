// Package compat holds the client × codec matrix: kcat (librdkafka),
// franz-go and kafka-python each produce with every codec (none, gzip,
// snappy, lz4, zstd) to a real Gregor broker, and each of them consumes back
// what every client produced. It also checks the codec the broker stored
// (compression.type=producer keeps the client's; a topic compression.type
// makes the broker recompress) and LogAppendTime topics as the clients see
// them. The tests are in matrix_test.go; this file only documents the
// package.
package compat
