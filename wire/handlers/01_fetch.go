package handlers

// Fetch: v0-v12 (v0-v3 down-converted to message formats v0/v1, see
// fetch_downconvert.go)
//
// Behaviour:
//   - Sessionless (KIP-227): no fetch session is ever created. As in
//     Kafka's FetchManager, SessionEpoch 0 (open a session) and -1 (no
//     session) make a full fetch, and any SessionID they name is closed
//     (none exists): the response is a full response with SessionID 0,
//     which tells clients no session was created (a session cache with no
//     room answers the same), and they keep sending full requests. Any
//     other epoch is an incremental fetch in a session, and there is none:
//     FETCH_SESSION_ID_NOT_FOUND (Kafka's answer whatever the SessionID,
//     0 included: it looks the id up), so the client drops the session and
//     falls back to a full fetch. ForgottenTopics is ignored.
//   - Reads go straight to the partition's Log from the connection
//     goroutine (no actor round trip): Log.Read(offset, maxBytes, bound)
//     with bound = high watermark for consumers, log end offset for a
//     follower (ReplicaID >= 0). Records are file regions sent with
//     sendfile (fetchresp.Build); the segment references are released after
//     the response is written.
//   - Bytes: each partition reads at most min(PartitionMaxBytes, what is
//     left of MaxBytes), whole batches only; the first partition with data
//     returns at least one batch even when it is larger (KIP-74); later
//     partitions return nothing rather than exceed MaxBytes.
//   - Offsets below the log start offset or above the log end offset →
//     OFFSET_OUT_OF_RANGE. An offset between the high watermark and the log
//     end offset is valid and returns no records.
//   - CurrentLeaderEpoch (v9+, KIP-320): older → FENCED_LEADER_EPOCH, newer
//     → UNKNOWN_LEADER_EPOCH.
//   - Long poll: when fewer than MinBytes are available and no partition
//     has an error, the request waits up to MaxWaitMillis. It registers a
//     waiter on each partition (partition.Handle.WaitForData) that appends
//     wake when the high watermark moves; it never polls. On wake-up it
//     re-reads everything.
//   - Replica fetch (ReplicaID >= 0, a follower broker): reads up to the
//     log end offset, not the high watermark; the fetch offset is recorded
//     as the follower's log end offset in the partition actor
//     (partition.Handle.RecordFollowerFetch, one message per partition,
//     sent from the reader goroutine without waiting), which may advance
//     the high watermark (completing acks=-1 produces) and propose the
//     follower back into the ISR. The response is built on a Broker.later
//     goroutine once every partition's actor has answered, so it carries
//     the new high watermark; an actor that does not answer within
//     partition.ReplicationAskTimeout makes its partition
//     REQUEST_TIMED_OUT. Its long poll wakes on the log end offset.
//     v12 LastFetchedEpoch: when the leader's log ends that epoch earlier
//     than the fetch offset (or has a lower epoch), the partition answers
//     DivergingEpoch{epoch, end offset} and no records (KIP-595), and the
//     follower truncates. A non-leader answers NOT_LEADER_OR_FOLLOWER.
//     Replication throttle (Broker.LeaderQuota, Kafka's
//     shouldLeaderThrottle): a partition named by the topic config
//     leader.replication.throttled.replicas for this broker, fetched by a
//     follower not in its ISR while the leader quota
//     (leader.replication.throttled.rate) is exceeded, returns no records;
//     it counts for nothing towards MinBytes and its long poll does not
//     wake on its data. The record bytes sent for throttled partitions
//     (in sync or not) are recorded against the quota.
//   - Consumers (ReplicaID -1) never read above the high watermark.
//   - KAFKA_STORAGE_ERROR (an offline replica or an unreadable segment)
//     is answered NOT_LEADER_OR_FOLLOWER to Fetch v0-v5, whose clients
//     may not know it (storageErrorForVersion).
//   - IsolationLevel (KIP-98): LastStableOffset is always the partition's
//     last stable offset (partition.View). READ_COMMITTED (1) consumers
//     read only below it (their long poll wakes on it,
//     Handle.WaitForStable) and get AbortedTransactions: the aborted
//     transactions (producer id, first offset) overlapping [fetch offset,
//     offset after the returned data), from the segments' .txnindex as
//     Kafka's collectAbortedTransactions, an empty list when none, null
//     when no records are returned; the records still go by sendfile,
//     and the client drops the aborted ones. READ_UNCOMMITTED (0) reads
//     below the high watermark with AbortedTransactions null.
//   - Follower fetching (KIP-392, v11+ consumers): a follower serves them
//     up to its high watermark, and with replica.selector.class the
//     leader may answer PreferredReadReplica instead of records (see
//     fetch_preferred.go). Otherwise PreferredReadReplica is -1.
//
// Version notes:
//   - v4: isolation level, last stable offset, aborted transactions.
//   - v5: log start offset.
//   - v6: same as v5. v7: sessions (KIP-227). v8: same as v7.
//   - v9: CurrentLeaderEpoch (KIP-320). v10: same as v9 (zstd).
//   - v11: rack and PreferredReadReplica (KIP-392).
//   - v12: flexible versions; LastFetchedEpoch/DivergingEpoch (KIP-595)
//     for followers (see Replica fetch). v13+ use topic ids: not served.

import (
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/partition"
	"gregor/quota/clientquota"
	"gregor/replication/metadata"
	"gregor/replication/throttle"
	"gregor/storage"
	"gregor/wire"
	"gregor/wire/fetchresp"
	"gregor/wire/security/acl"
)

func init() { register(1, 0, 12, handleFetch) }

// fetchPart is one requested partition and what was read for it.
type fetchPart struct {
	topic string
	req   *kmsg.FetchRequestTopicPartition
	out   *kmsg.FetchResponseTopicPartition
	h     *partition.Handle
	// missing is the error for a partition not hosted here (h nil).
	missing *kerr.Error
	fd      storage.FetchData
	has     bool // fd holds segment references
	// recorded: a follower's fetch offset was reported to the leader's
	// partition actor (once per request, not per long-poll pass);
	// answered: it answered recErr (both set on the goroutine that waits).
	recorded bool
	answered bool
	recErr   *kerr.Error
	diverged bool // answered with a DivergingEpoch: respond at once
	// redirected: answered with a PreferredReadReplica (KIP-392,
	// fetch_preferred.go): respond at once.
	redirected bool
	// throttled: the last read left this follower's partition out
	// (Broker.LeaderQuota); it does not count towards MinBytes and its
	// long poll does not wait for its data, as Kafka's DelayedFetch.
	throttled bool
}

// recordedFetch is a partition actor's answer to RecordFollowerFetch.
type recordedFetch struct {
	fp  *fetchPart
	err *kerr.Error
}

type fetchState struct {
	b       *Broker
	req     *kmsg.FetchRequest
	resp    *kmsg.FetchResponse
	parts   []*fetchPart
	idx     [][]*fetchPart // [topic][partition] in response order
	hasErr  bool
	gotData int64
	// quotaMax bounds the response's bytes to what the consumer's
	// consumer_byte_rate accepts in one quota window (Kafka's
	// getMaxValueInQuotaWindow); 0 = no bound.
	quotaMax int64
	// listener is the client's listener; snap the metadata snapshot the
	// replica selector reads, loaded on first use (fetch_preferred.go).
	listener string
	snap     *metadata.Snapshot
}

func handleFetch(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.FetchRequest)
	resp := req.ResponseKind().(*kmsg.FetchResponse)
	if req.Version >= 7 && req.SessionEpoch != 0 && req.SessionEpoch != -1 {
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	s := &fetchState{b: b, req: req, resp: resp, listener: rc.Listener}
	if b.Quotas != nil && req.ReplicaID < 0 {
		if m := b.Quotas.MaxValueInWindow(clientquota.Fetch, rc.Principal.Name, rc.ClientID); m < 1<<31-1 {
			s.quotaMax = max(int64(m), 1)
		}
	}
	for ti := range req.Topics {
		rt := &req.Topics[ti]
		st := kmsg.NewFetchResponseTopic()
		st.Topic = rt.Topic
		st.Partitions = make([]kmsg.FetchResponseTopicPartition, len(rt.Partitions))
		resp.Topics = append(resp.Topics, st)
	}
	s.idx = make([][]*fetchPart, len(req.Topics))
	// A follower needs ClusterAction, a consumer Read on each topic; a
	// denied partition answers TOPIC_AUTHORIZATION_FAILED (Kafka's checks).
	followerOK := req.ReplicaID < 0 || b.authorizeCluster(rc, acl.OpClusterAction)
	var readable map[string]bool
	if req.ReplicaID < 0 {
		readable = filterAuthorized(b, rc, acl.OpRead, acl.ResourceTopic, req.Topics, func(t kmsg.FetchRequestTopic) string { return t.Topic })
	}
	for ti := range req.Topics {
		rt := &req.Topics[ti]
		for pi := range rt.Partitions {
			fp := &fetchPart{topic: rt.Topic, req: &rt.Partitions[pi], out: &resp.Topics[ti].Partitions[pi]}
			tp := storage.TopicPartition{Topic: rt.Topic, Partition: rt.Partitions[pi].Partition}
			if !followerOK || !allowed(readable, rt.Topic) {
				fp.missing = kerr.TopicAuthorizationFailed
			} else if h, ok := b.Replicas.Get(tp); ok {
				fp.h = h
			} else {
				fp.missing = notHosted(b, tp)
			}
			s.parts = append(s.parts, fp)
			s.idx[ti] = append(s.idx[ti], fp)
		}
	}
	if req.ReplicaID >= 0 {
		if recorded, n := s.recordFollower(); n > 0 {
			return b.later(func() wire.Response {
				s.awaitRecorded(rc, recorded, n)
				s.readAll()
				if s.done() {
					return s.respond(rc.Version)
				}
				return s.longPoll(rc)
			})
		}
	}
	s.readAll()
	if s.done() {
		return wire.Now(s.respond(rc.Version))
	}
	return b.later(func() wire.Response { return s.longPoll(rc) }) // ends with rc.Ctx, as produce's wait
}

// recordFollower reports a follower's fetch offset (its log end offset)
// to the actor of every partition it may read — not one that answers an
// error or a DivergingEpoch (Kafka updates the follower's state only for
// a read without divergence) — without waiting; n answers will arrive on
// recorded.
func (s *fetchState) recordFollower() (recorded chan recordedFetch, n int) {
	for _, fp := range s.parts {
		v, err := s.check(fp)
		if err != nil || s.diverging(fp, v) {
			continue
		}
		if recorded == nil {
			recorded = make(chan recordedFetch, len(s.parts)-n)
		}
		fp.recorded = true
		n++
		fp.h.RecordFollowerFetch(s.req.ReplicaID, fp.req.FetchOffset, func(err *kerr.Error) {
			recorded <- recordedFetch{fp, err} // buffered for every answer: never blocks the actor
		})
	}
	return recorded, n
}

// awaitRecorded waits for n answers of recordFollower; a partition whose
// actor has not answered within partition.ReplicationAskTimeout, or when
// the connection or broker closes, answers REQUEST_TIMED_OUT.
func (s *fetchState) awaitRecorded(rc *wire.RequestContext, recorded <-chan recordedFetch, n int) {
	var closed <-chan struct{}
	if rc.Ctx != nil {
		closed = rc.Ctx.Done()
	}
	stopping := s.b.closing()
	timer := time.NewTimer(partition.ReplicationAskTimeout)
	defer timer.Stop()
	for got := 0; got < n; got++ {
		select {
		case r := <-recorded:
			r.fp.recErr, r.fp.answered = r.err, true
			continue
		case <-timer.C:
		case <-closed:
		case <-stopping:
		}
		for _, fp := range s.parts {
			if fp.recorded && !fp.answered {
				fp.recErr = kerr.RequestTimedOut
			}
		}
		return
	}
}

// done reports whether to answer now rather than wait.
func (s *fetchState) done() bool {
	return s.req.MaxWaitMillis <= 0 || s.hasErr || s.gotData >= int64(s.req.MinBytes) || len(s.parts) == 0
}

// longPoll waits for new data (or MaxWaitMillis, or the connection to
// close) and returns the answer.
func (s *fetchState) longPoll(rc *wire.RequestContext) wire.Response {
	timer := time.NewTimer(time.Duration(s.req.MaxWaitMillis) * time.Millisecond)
	defer timer.Stop()
	var closed <-chan struct{}
	if rc.Ctx != nil {
		closed = rc.Ctx.Done()
	}
	wake := make(chan struct{}, 1)
	for {
		s.releaseAll()
		cancels := make([]func(), 0, len(s.parts))
		for _, fp := range s.parts {
			switch {
			case fp.h == nil, fp.throttled:
			case s.req.ReplicaID >= 0:
				cancels = append(cancels, fp.h.WaitForLogEnd(fp.req.FetchOffset, wake))
			case s.readCommitted():
				cancels = append(cancels, fp.h.WaitForStable(fp.req.FetchOffset, wake))
			default:
				cancels = append(cancels, fp.h.WaitForData(fp.req.FetchOffset, wake))
			}
		}
		expired := false
		select {
		case <-wake:
		case <-timer.C:
			expired = true
		case <-closed:
			expired = true
		}
		for _, c := range cancels {
			c()
		}
		s.readAll()
		if expired || s.done() {
			return s.respond(rc.Version)
		}
	}
}

func (s *fetchState) releaseAll() {
	for _, fp := range s.parts {
		if fp.has {
			fp.fd.Release()
			fp.has = false
		}
	}
}

// readAll (re)reads every partition into its response slot.
func (s *fetchState) readAll() {
	s.hasErr, s.gotData = false, 0
	limit := int64(s.req.MaxBytes)
	if limit <= 0 {
		limit = 1<<31 - 1
	}
	if s.quotaMax > 0 {
		limit = min(limit, s.quotaMax)
	}
	minOne := true
	now := time.Now()
	for _, fp := range s.parts {
		fp.throttled, fp.redirected = false, false
		n, err := s.readOne(fp, limit, minOne, now)
		out := fp.out
		if err != nil {
			*out = kmsg.NewFetchResponseTopicPartition()
			out.Partition = fp.req.Partition
			out.ErrorCode = err.Code
			out.HighWatermark, out.LastStableOffset, out.LogStartOffset = -1, -1, -1
			out.PreferredReadReplica = -1
			// Empty, not null, records: librdkafka treats a null records
			// field as a parse failure and never applies auto.offset.reset.
			out.RecordBatches = []byte{}
			s.hasErr = true
			continue
		}
		if fp.diverged || fp.redirected {
			s.hasErr = true // not an error, but the follower must truncate now / the consumer go elsewhere
		}
		if n > 0 {
			minOne = false
			limit -= n
			s.gotData += n
		}
	}
}

// check is what every read of fp starts with: the partition's View, or
// the error to answer (not hosted, not serving, not the leader — a
// follower serves consumers' v11+ fetches, fetch_preferred.go —, a fenced
// or unknown CurrentLeaderEpoch, an offset outside the log).
func (s *fetchState) check(fp *fetchPart) (*partition.View, *kerr.Error) {
	if fp.h == nil {
		if fp.missing != nil {
			return nil, fp.missing
		}
		return nil, kerr.UnknownTopicOrPartition
	}
	v := fp.h.View()
	if v.Err != nil {
		return nil, v.Err
	}
	if !v.IsLeader() && !s.readsFromFollower(v) {
		return nil, kerr.NotLeaderForPartition
	}
	if err := partition.CheckLeaderEpoch(fp.req.CurrentLeaderEpoch, v.LeaderEpoch); err != nil && s.req.Version >= 9 {
		return nil, err
	}
	if off := fp.req.FetchOffset; off < v.LogStartOffset || off > v.LogEndOffset {
		return nil, kerr.OffsetOutOfRange
	}
	return v, nil
}

// diverging reports whether a follower's v12 LastFetchedEpoch ends
// earlier in the leader's log than its fetch offset, or is newer than
// the leader's (KIP-595): it must truncate before it reads.
func (s *fetchState) diverging(fp *fetchPart, v *partition.View) bool {
	if s.req.Version < 12 || fp.req.LastFetchedEpoch < 0 {
		return false
	}
	e, end := v.Log.EndOffsetForEpoch(fp.req.LastFetchedEpoch)
	return e >= 0 && (e < fp.req.LastFetchedEpoch || end < fp.req.FetchOffset)
}

// readCommitted: a consumer fetch at READ_COMMITTED (isolation level 1).
func (s *fetchState) readCommitted() bool {
	return s.req.ReplicaID < 0 && s.req.IsolationLevel == 1
}

// readOne reads one partition with at most min(PartitionMaxBytes, limit)
// bytes (at least one batch if minOne) and fills its response fields.
func (s *fetchState) readOne(fp *fetchPart, limit int64, minOne bool, now time.Time) (int64, *kerr.Error) {
	v, kerrv := s.check(fp)
	if kerrv != nil {
		return 0, kerrv
	}
	if id, ok := s.preferredReplica(fp, v, now); ok {
		s.redirect(fp, v, id)
		return 0, nil
	}
	if err := fetchFormatError(s.req.Version, s.req.ReplicaID >= 0, v.Log.Config()); err != nil {
		return 0, err // fetch_downconvert.go
	}
	off := fp.req.FetchOffset
	out := fp.out
	bound := v.HighWatermark
	if s.req.ReplicaID >= 0 {
		if s.diverging(fp, v) {
			// KIP-595 (served to ZK-mode followers as Kafka 2.7+ does): the
			// follower's last epoch ends earlier here, or is unknown past
			// its position → tell it where to truncate, no records.
			e, end := v.Log.EndOffsetForEpoch(fp.req.LastFetchedEpoch)
			*out = kmsg.NewFetchResponseTopicPartition()
			out.Partition = fp.req.Partition
			out.HighWatermark, out.LastStableOffset, out.LogStartOffset = v.HighWatermark, v.LastStableOffset, v.LogStartOffset
			out.PreferredReadReplica = -1
			out.RecordBatches = []byte{}
			out.DivergingEpoch.Epoch, out.DivergingEpoch.EndOffset = e, end
			fp.diverged = true
			return 0, nil
		}
		if fp.recErr != nil {
			return 0, fp.recErr
		}
		bound = v.LogEndOffset
	} else if s.readCommitted() {
		bound = v.LastStableOffset
	}
	*out = kmsg.NewFetchResponseTopicPartition()
	out.Partition = fp.req.Partition
	out.HighWatermark, out.LastStableOffset, out.LogStartOffset = v.HighWatermark, v.LastStableOffset, v.LogStartOffset
	out.PreferredReadReplica = -1
	out.RecordBatches = []byte{} // empty, not null, as Kafka sends
	maxBytes := min(int64(fp.req.PartitionMaxBytes), limit)
	if off >= bound || maxBytes <= 0 && !minOne {
		return 0, nil
	}
	if s.req.ReplicaID >= 0 && throttle.ShouldLeaderThrottle(s.b.LeaderQuota, fp.topic, fp.req.Partition, slices.Contains(v.ISR, s.req.ReplicaID), now) {
		fp.throttled = true // no records, as Kafka's readFromLog for a throttled partition
		return 0, nil
	}
	fd, err := v.Log.Read(off, max(maxBytes, 0), bound)
	switch {
	case errors.Is(err, storage.ErrOffsetOutOfRange):
		return 0, kerr.OffsetOutOfRange
	case errors.Is(err, storage.ErrLogClosed):
		return 0, kerr.NotLeaderForPartition
	case err != nil:
		return 0, kerr.KafkaStorageError
	}
	if fd.Bytes == 0 || (!minOne && fd.Bytes > maxBytes) {
		// KIP-74: only the first partition with data may go over the limit.
		fd.Release()
		return 0, nil
	}
	if s.readCommitted() {
		out.AbortedTransactions = abortedTxns(v.Log, off, fd.NextOffset())
	}
	fp.fd, fp.has = fd, true
	return fd.Bytes, nil
}

// recordThrottled records in the leader quota the bytes this follower
// response carries for throttled partitions, in sync or not (Kafka's
// sizeOfThrottledPartitions; Gregor counts the record bytes, not the
// partition headers), and counts the partitions left out.
func (s *fetchState) recordThrottled() {
	q := s.b.LeaderQuota
	var n int64
	omitted := 0
	for _, fp := range s.parts {
		if fp.throttled {
			omitted++
		}
		if fp.has && q.IsThrottled(fp.topic, fp.req.Partition) {
			n += fp.fd.Bytes
		}
	}
	q.Record(n, time.Now())
	q.NoteOmitted(omitted)
}

// abortedTxns is a read_committed fetch's AbortedTransactions for data read
// from fetchOffset up to upperBound (the offset after it): never null when
// records are returned.
func abortedTxns(lg partition.Log, fetchOffset, upperBound int64) []kmsg.FetchResponseTopicPartitionAbortedTransaction {
	out := []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
	tl, ok := lg.(partition.TxnLog)
	if !ok {
		return out
	}
	for _, a := range tl.CollectAbortedTxns(fetchOffset, upperBound) {
		at := kmsg.NewFetchResponseTopicPartitionAbortedTransaction()
		at.ProducerID, at.FirstOffset = a.ProducerID, a.FirstOffset
		out = append(out, at)
	}
	return out
}

// respond builds the zero-copy response; the segment references are
// released once the writer has sent it.
func (s *fetchState) respond(version int16) wire.Response {
	converted := s.downConvertAll(version) // Fetch v0-v3 only (fetch_downconvert.go)
	for _, fp := range s.parts {
		fp.out.ErrorCode = storageErrorForVersion(fp.out.ErrorCode, version)
	}
	parts := s.parts
	records := func(t, p int) []storage.Region {
		fp := s.idx[t][p]
		if !fp.has {
			return nil
		}
		return fp.fd.Regions
	}
	release := func() {
		for _, fp := range parts {
			if fp.has {
				fp.fd.Release()
			}
		}
	}
	if s.req.ReplicaID >= 0 && s.b.LeaderQuota != nil {
		s.recordThrottled()
	}
	if m := s.b.Metrics; m != nil { // kafka_server_brokertopicmetrics_{,replication_}bytes_out_total
		for ti, fps := range s.idx {
			var n int64
			for _, fp := range fps {
				if fp.has {
					n += fp.fd.Bytes
				}
			}
			m.FetchBytesOut(s.req.Topics[ti].Topic, n, s.req.ReplicaID >= 0)
		}
	}
	if converted != nil {
		streams := func(t, p int) wire.Stream {
			if st, ok := converted[s.idx[t][p]]; ok {
				return st
			}
			return nil
		}
		return wire.Response{Body: fetchresp.BuildStreamed(version, s.resp, records, streams, release)}
	}
	return wire.Response{Body: fetchresp.Build(version, s.resp, records, release)}
}

// storageErrorForVersion is a partition's error code as Fetch version
// answers it: KAFKA_STORAGE_ERROR (56) becomes NOT_LEADER_OR_FOLLOWER for
// v0-v5, whose clients may not know 56 and would give up on it as an
// unknown error instead of refreshing metadata and retrying (Kafka's
// KafkaApis maybeDownConvertStorageError, applied to every partition of
// those versions, converted or not). Produce and ListOffsets answer 56 at
// every version, as Kafka does.
func storageErrorForVersion(code, version int16) int16 {
	if code == kerr.KafkaStorageError.Code && version <= 5 {
		return kerr.NotLeaderForPartition.Code
	}
	return code
}
