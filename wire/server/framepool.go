package server

import (
	"math/bits"
	"sync"
)

// Produce request frames are the broker's one big allocation per request
// (a whole batch per partition, hundreds of KiB). A fresh `make` per frame
// costs the zeroing, page faults on memory the GC has returned to the OS,
// and GC cycles paced by that allocation rate, all of it proportional to
// the bytes produced. Their buffers are recycled instead: by the time a
// Produce response has been written, the handler and the partition actors
// are done with the batches that alias the frame (the handler answers only
// after every actor released its batch or the batch was abandoned before
// the actor touched it; wire.RequestContext.Raw is valid until the
// response is written). Other requests' frames are left to the GC, because
// their decoded messages may keep aliases (JoinGroup metadata, ...).
//
// Buffers come in power-of-two size classes from 1<<minFrameClass to
// 1<<maxFrameClass bytes; a frame goes to the smallest class that holds it
// (so frames of 2 KiB or less, and over 8 MiB, are allocated and dropped
// as before).
const (
	minFrameClass = 12 // 4 KiB
	maxFrameClass = 23 // 8 MiB
)

var framePools [maxFrameClass - minFrameClass + 1]sync.Pool

// frameClass is the index into framePools of the smallest class holding
// size bytes, or -1 when size is not pooled.
func frameClass(size int) int {
	if size <= 0 || size > 1<<maxFrameClass {
		return -1
	}
	c := bits.Len(uint(size - 1)) // smallest c with 1<<c >= size
	if c < minFrameClass {
		return -1
	}
	return c - minFrameClass
}

// getFrame (used for Produce frames only) returns a buffer of length size (its contents are garbage; the
// caller overwrites all of it) and, when it belongs to a size class, the
// handle to give back to putFrame.
func getFrame(size int) ([]byte, *[]byte) {
	c := frameClass(size)
	if c < 0 {
		return make([]byte, size), nil
	}
	if p, _ := framePools[c].Get().(*[]byte); p != nil {
		return (*p)[:size], p
	}
	b := make([]byte, 1<<(c+minFrameClass))
	return b[:size], &b
}

// putFrame recycles a buffer from getFrame. Nothing may read or write it
// afterwards.
func putFrame(p *[]byte) {
	if p == nil {
		return
	}
	if c := frameClass(cap(*p)); c >= 0 && cap(*p) == 1<<(c+minFrameClass) {
		framePools[c].Put(p)
	}
}
