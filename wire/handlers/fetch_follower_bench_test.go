package handlers

import "testing"

// BenchmarkFollowerFetch is a follower's fetch of data below the leader's
// log end offset through the Fetch handler: the position is recorded in
// the partition actor (one message) and the answer, file regions for
// sendfile, is built once the actor has answered. MB/s are of record
// bytes answered.
func BenchmarkFollowerFetch(b *testing.B) {
	e, proto := followerEnv(b, 16, 1024)
	const batches = 256
	e.produceCopies(tpA, proto, batches)
	benchFetch(b, e, 1, batches)
}
