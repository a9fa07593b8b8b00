package handlers

import (
	"encoding/binary"
	"reflect"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/quota/clientquota"
	"gregor/wire"
)

// Client quota enforcement (KIP-13, KIP-124, KIP-219), as KafkaApis does
// it: once a request is handled, its produce bytes (the request's size,
// at dispatch) or fetch bytes (the response's size, when it is ready)
// are recorded against the connection's producer_byte_rate /
// consumer_byte_rate, its handling time against request_percentage (at
// dispatch), and the response carries the larger
// throttle time in throttle_time_ms (every response type that has the
// field gets at least the request quota's) and in wire.Response.Throttle,
// which mutes the connection for that long after the response is sent
// (wire/server/mute.go). A throttled consumer fetch answers no data
// (its bytes are taken back out of the rate, Kafka's
// unrecordQuotaSensor) and is bounded beforehand to what one quota
// window allows (getMaxValueInQuotaWindow), so one fetch can never be
// larger than the quota can ever accept. Exempt, as in Kafka:
// inter-broker requests (the cluster-action APIs) and follower fetches.
// Request time is the handler's time on the connection goroutine
// (Gregor's counterpart of Kafka's request-handler thread time; work
// done later by a partition actor or a task goroutine is not counted).
// The user is the connection's principal name (ANONYMOUS without
// authentication), so client-id quotas work on plaintext listeners.

// quotaExempt are the cluster-action APIs (LeaderAndIsr, StopReplica,
// UpdateMetadata, ControlledShutdown, WriteTxnMarkers), which Kafka
// answers without recording or throttling.
var quotaExempt = map[int16]bool{4: true, 5: true, 6: true, 7: true, 27: true}

// withQuotas wraps a handler's reply with the quota accounting; start is
// when the handler was called.
func (b *Broker) withQuotas(rc *wire.RequestContext, req kmsg.Request, reply wire.Reply, start time.Time) wire.Reply {
	q := b.Quotas
	if q == nil || quotaExempt[rc.Key] {
		return reply
	}
	if f, ok := req.(*kmsg.FetchRequest); ok && f.ReplicaID >= 0 {
		return reply
	}
	handled := time.Since(start)
	user, client := rc.Principal.Name, rc.ClientID
	// The handler's time and a produce's bytes are known now, so both
	// throttles are decided at dispatch and mute the connection at once:
	// the requests the client pipelined behind this one wait (Kafka reads
	// one request of a connection at a time and would not have read them
	// yet; decided only when the response is sent, they would already
	// have been handled, unthrottled).
	reqThrottle := q.RecordAndThrottle(clientquota.Request, user, client, float64(handled)/float64(time.Millisecond))
	var bw time.Duration
	if rc.Key == 0 {
		bw = q.RecordAndThrottle(clientquota.Produce, user, client, float64(rc.Size))
	}
	decided := time.Now()
	if d := max(bw, reqThrottle); d > 0 && rc.Mute != nil {
		rc.Mute(d)
	}
	return reply.Then(func(resp wire.Response) wire.Response {
		if rc.Key == 1 { // Fetch (consumer)
			// Its bytes are known only now: Kafka decides a fetch's
			// throttles when it answers, so the request throttle counts
			// in full from here.
			return b.throttleFetch(rc, resp, reqThrottle)
		}
		// The throttle began at dispatch; the response (sent once the
		// append or the handler's later work is done) carries what is left
		// of it, which the client waits from receipt, so that work's time
		// is not added to the throttle.
		left := max(max(bw, reqThrottle)-time.Since(decided), 0)
		return setThrottle(resp, left)
	})
}

// throttleFetch records a consumer fetch response's bytes and, when the
// connection is over a quota, answers an empty response instead (Kafka's
// fetchContext.getThrottledResponse: no partitions, session 0).
func (b *Broker) throttleFetch(rc *wire.RequestContext, resp wire.Response, reqThrottle time.Duration) wire.Response {
	q := b.Quotas
	user, client := rc.Principal.Name, rc.ClientID
	var size int64
	if resp.Body != nil {
		size = resp.Body.Size
	}
	bw := q.RecordAndThrottle(clientquota.Fetch, user, client, float64(size))
	d := max(bw, reqThrottle)
	if d <= 0 {
		return resp
	}
	q.Unrecord(clientquota.Fetch, user, client, float64(size))
	release(resp)
	empty := kmsg.NewPtrFetchResponse()
	empty.ThrottleMillis = throttleMillis(d)
	return wire.Response{Msg: empty, Throttle: d}
}

// throttleMillis is d in ms for a throttle_time_ms field.
func throttleMillis(d time.Duration) int32 {
	return int32(min(d.Milliseconds(), 1<<31-1))
}

// setThrottle puts d into the response's throttle_time_ms unless the
// handler set a larger one (a controller mutation throttle), and makes
// the connection wait out the larger of the two.
func setThrottle(resp wire.Response, d time.Duration) wire.Response {
	switch {
	case resp.Msg != nil:
		v := reflect.ValueOf(resp.Msg)
		if v.Kind() == reflect.Pointer {
			if f := v.Elem().FieldByName("ThrottleMillis"); f.IsValid() && f.Kind() == reflect.Int32 && f.CanSet() {
				own := time.Duration(f.Int()) * time.Millisecond
				d = max(d, own)
				f.SetInt(int64(throttleMillis(d)))
			}
		}
	case resp.Body != nil && d > 0:
		// A pre-encoded body (Fetch) starts with throttle_time_ms.
		if len(resp.Body.Chunks) > 0 && len(resp.Body.Chunks[0].Bytes) >= 4 {
			binary.BigEndian.PutUint32(resp.Body.Chunks[0].Bytes, uint32(throttleMillis(d)))
		}
	}
	resp.Throttle = max(resp.Throttle, d)
	return resp
}

// release runs a response body's Release, if any, once.
func release(r wire.Response) {
	if r.Body != nil && r.Body.Release != nil {
		f := r.Body.Release
		r.Body.Release = nil
		f()
	}
}
