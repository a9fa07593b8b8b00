package handlers

// Forwarding to the controller (KIP-590, as KRaft Kafka's brokers do).
//
// CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders,
// AlterPartitionReassignments and ListPartitionReassignments need the
// active controller. On any other broker the handler first authorizes
// with the client's principal exactly as on the controller (per topic,
// per cluster), applies the client's controller mutation quota, and asks
// the local controller; what it answers NOT_CONTROLLER is then sent to the
// active controller with the broker's inter-broker client (Broker.Forward,
// replication/forward), at the client's request version, and the
// controller's per-item answers are merged with the local ones. The
// mutation quota is charged here only (forward_quota.go). So a client is refused on every broker what it is
// refused on the controller, and never gains the forwarding broker's
// rights: only the items it was allowed are forwarded. The controller
// authorizes the forwarded request with the forwarding broker's
// inter-broker principal (normally a super user).
//
// Everything runs on the request's async goroutine (b.async), never on the
// connection's reader. The request's own timeout bounds the forwarding;
// a controller that moved is found again through /controller; one that
// does not answer in time gives REQUEST_TIMED_OUT, no elected controller
// NOT_CONTROLLER (both retriable).

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/config"
	"gregor/replication/controller"
	"gregor/replication/forward"
)

// ControllerForwarder sends a request to the active controller
// (*forward.Forwarder). See forward.Forwarder.Send for the errors.
type ControllerForwarder interface {
	Send(ctx context.Context, req kmsg.Request, notController func(kmsg.Response) bool) (kmsg.Response, error)
}

var _ ControllerForwarder = (*forward.Forwarder)(nil)

// defaultForwardTimeout bounds a forwarded request whose own timeout is
// not positive (Kafka's request.timeout.ms default).
const defaultForwardTimeout = 30 * time.Second

// forwardContext is the deadline of a forwarded request: its timeout_ms,
// cancelled when the handlers close.
func (b *Broker) forwardContext(timeoutMillis int32) (context.Context, context.CancelFunc) {
	d := time.Duration(timeoutMillis) * time.Millisecond
	if d <= 0 {
		d = defaultForwardTimeout
	}
	return context.WithTimeout(b.tasksContext(), d)
}

// forwardError is the Kafka error for a forwarding failure.
func forwardError(err error) *controller.Error {
	switch {
	case errors.Is(err, forward.ErrTimeout):
		return &controller.Error{Code: kerr.RequestTimedOut, Message: "The controller did not answer the forwarded request in time."}
	case errors.Is(err, forward.ErrNoController), errors.Is(err, context.Canceled):
		return controller.ErrNotController
	default:
		return &controller.Error{Code: kerr.UnknownServerError, Message: err.Error()}
	}
}

// notControllerAt lists the indexes i < n whose err(i) is NOT_CONTROLLER:
// the items the local controller could not do, to forward.
func notControllerAt(n int, err func(i int) error) []int {
	var idx []int
	for i := 0; i < n; i++ {
		if isNotController(err(i)) {
			idx = append(idx, i)
		}
	}
	return idx
}

// isNotController is true for a controller.Error (or kerr) NOT_CONTROLLER.
func isNotController(err error) bool { return errors.Is(err, kerr.NotController) }

// codeErr turns a response's error code and message into an error (nil
// for 0).
func codeErr(code int16, msg *string) error {
	if code == 0 {
		return nil
	}
	e := &controller.Error{Code: kerr.ErrorForCode(code).(*kerr.Error)}
	if msg != nil {
		e.Message = *msg
	}
	return e
}

// newestVersion, as the version of a forwarded request, sends it at the
// newest version the controller serves: for the validate-only pass a
// handler makes of its own (to count mutations before the quota), which
// no client sent and whose answer must carry every field (the partition
// counts of CreateTopics v5+).
const newestVersion int16 = -1

// forwardVersion is the version a forwarded request goes out at: the
// client's (version), or req's newest for newestVersion.
func forwardVersion(req kmsg.Request, version int16) int16 {
	if version < 0 {
		return req.MaxVersion()
	}
	return version
}

// createTopicsVia creates on the local controller, and forwards what it
// answered NOT_CONTROLLER to the active one as a CreateTopics of version
// (the client's, or newestVersion).
func (b *Broker) createTopicsVia(version int16, timeoutMillis int32, todo []controller.NewTopic, validateOnly bool) []controller.CreatedTopic {
	results := b.Topics.CreateTopics(todo, validateOnly)
	b.forwardCreateTopics(version, todo, results, validateOnly, timeoutMillis)
	return results
}

// createPartitionsVia is createTopicsVia for CreatePartitions.
func (b *Broker) createPartitionsVia(version int16, timeoutMillis int32, incs []controller.PartitionIncrease, validateOnly bool) []error {
	errs := b.Topics.CreatePartitions(incs, validateOnly)
	b.forwardCreatePartitions(version, incs, errs, validateOnly, timeoutMillis)
	return errs
}

// forwardCreateTopics forwards the topics of todo the local controller
// answered NOT_CONTROLLER (results, updated in place) to the controller.
func (b *Broker) forwardCreateTopics(version int16, todo []controller.NewTopic, results []controller.CreatedTopic, validateOnly bool, timeoutMillis int32) {
	if b.Forward == nil {
		return
	}
	idx := notControllerAt(len(results), func(i int) error { return results[i].Err })
	if len(idx) == 0 {
		return
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = forwardVersion(req, version)
	req.TimeoutMillis, req.ValidateOnly = timeoutMillis, validateOnly
	for _, i := range idx {
		nt := todo[i]
		t := kmsg.NewCreateTopicsRequestTopic()
		// The client's counts as sent, also beside an assignment: the
		// controller refuses both set (INVALID_REQUEST), as it would
		// the client's own request.
		t.Topic, t.NumPartitions, t.ReplicationFactor = nt.Name, nt.NumPartitions, nt.ReplicationFactor
		if len(nt.Assignment) > 0 {
			for p := int32(0); p < int32(len(nt.Assignment)); p++ {
				a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
				a.Partition, a.Replicas = p, nt.Assignment[p]
				t.ReplicaAssignment = append(t.ReplicaAssignment, a)
			}
		}
		for k, v := range nt.Configs {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = k, &v
			t.Configs = append(t.Configs, c)
		}
		req.Topics = append(req.Topics, t)
	}
	ctx, cancel := b.forwardContext(timeoutMillis)
	defer cancel()
	kresp, err := b.Forward.Send(ctx, req, func(r kmsg.Response) bool {
		for _, t := range r.(*kmsg.CreateTopicsResponse).Topics {
			if t.ErrorCode == kerr.NotController.Code {
				return true
			}
		}
		return false
	})
	if errors.Is(err, forward.ErrLocal) { // elected here meanwhile
		local := make([]controller.NewTopic, len(idx))
		for j, i := range idx {
			local[j] = todo[i]
		}
		for j, r := range b.Topics.CreateTopics(local, validateOnly) {
			results[idx[j]] = r
		}
		return
	}
	if err != nil {
		for _, i := range idx {
			results[i].Err = forwardError(err)
		}
		return
	}
	byName := map[string]kmsg.CreateTopicsResponseTopic{}
	for _, t := range kresp.(*kmsg.CreateTopicsResponse).Topics {
		byName[t.Topic] = t
	}
	for _, i := range idx {
		t, ok := byName[todo[i].Name]
		if !ok {
			results[i].Err = &controller.Error{Code: kerr.UnknownServerError, Message: "the controller's response left this topic out"}
			continue
		}
		r := controller.CreatedTopic{Name: t.Topic, Err: codeErr(t.ErrorCode, t.ErrorMessage), TopicID: t.TopicID,
			NumPartitions: t.NumPartitions, ReplicationFactor: t.ReplicationFactor}
		for _, c := range t.Configs {
			e := config.ConfigEntry{Name: c.Name, Source: kmsg.ConfigSource(c.Source), ReadOnly: c.ReadOnly, Sensitive: c.IsSensitive}
			if c.Value != nil {
				e.Value = *c.Value
			} else if !c.IsSensitive {
				e.Null = true
			}
			r.Configs = append(r.Configs, e)
		}
		results[i] = r
	}
}

// forwardDeleteTopics forwards the names the local controller answered
// NOT_CONTROLLER (errs, updated in place) to the controller.
func (b *Broker) forwardDeleteTopics(version int16, names []string, errs []error, timeoutMillis int32) {
	if b.Forward == nil {
		return
	}
	idx := notControllerAt(len(errs), func(i int) error { return errs[i] })
	if len(idx) == 0 {
		return
	}
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = forwardVersion(req, version)
	req.TimeoutMillis = timeoutMillis
	for _, i := range idx {
		n := names[i]
		req.TopicNames = append(req.TopicNames, n) // v0-5
		t := kmsg.NewDeleteTopicsRequestTopic()
		t.Topic = &n // v6+
		req.Topics = append(req.Topics, t)
	}
	ctx, cancel := b.forwardContext(timeoutMillis)
	defer cancel()
	kresp, err := b.Forward.Send(ctx, req, func(r kmsg.Response) bool {
		for _, t := range r.(*kmsg.DeleteTopicsResponse).Topics {
			if t.ErrorCode == kerr.NotController.Code {
				return true
			}
		}
		return false
	})
	if errors.Is(err, forward.ErrLocal) {
		local := make([]string, len(idx))
		for j, i := range idx {
			local[j] = names[i]
		}
		for j, e := range b.Topics.DeleteTopics(local) {
			errs[idx[j]] = e
		}
		return
	}
	if err != nil {
		for _, i := range idx {
			errs[i] = forwardError(err)
		}
		return
	}
	byName := map[string]error{}
	seen := map[string]bool{}
	for _, t := range kresp.(*kmsg.DeleteTopicsResponse).Topics {
		if t.Topic != nil {
			byName[*t.Topic], seen[*t.Topic] = codeErr(t.ErrorCode, t.ErrorMessage), true
		}
	}
	for _, i := range idx {
		if !seen[names[i]] {
			errs[i] = &controller.Error{Code: kerr.UnknownServerError, Message: "the controller's response left this topic out"}
			continue
		}
		errs[i] = byName[names[i]]
	}
}

// forwardCreatePartitions forwards the increases the local controller
// answered NOT_CONTROLLER (errs, updated in place) to the controller.
func (b *Broker) forwardCreatePartitions(version int16, incs []controller.PartitionIncrease, errs []error, validateOnly bool, timeoutMillis int32) {
	if b.Forward == nil {
		return
	}
	idx := notControllerAt(len(errs), func(i int) error { return errs[i] })
	if len(idx) == 0 {
		return
	}
	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Version = forwardVersion(req, version)
	req.TimeoutMillis, req.ValidateOnly = timeoutMillis, validateOnly
	for _, i := range idx {
		t := kmsg.NewCreatePartitionsRequestTopic()
		t.Topic, t.Count = incs[i].Topic, incs[i].Count
		if incs[i].Assignment != nil {
			t.Assignment = []kmsg.CreatePartitionsRequestTopicAssignment{}
			for _, rs := range incs[i].Assignment {
				a := kmsg.NewCreatePartitionsRequestTopicAssignment()
				a.Replicas = rs
				t.Assignment = append(t.Assignment, a)
			}
		}
		req.Topics = append(req.Topics, t)
	}
	ctx, cancel := b.forwardContext(timeoutMillis)
	defer cancel()
	kresp, err := b.Forward.Send(ctx, req, func(r kmsg.Response) bool {
		for _, t := range r.(*kmsg.CreatePartitionsResponse).Topics {
			if t.ErrorCode == kerr.NotController.Code {
				return true
			}
		}
		return false
	})
	if errors.Is(err, forward.ErrLocal) {
		local := make([]controller.PartitionIncrease, len(idx))
		for j, i := range idx {
			local[j] = incs[i]
		}
		for j, e := range b.Topics.CreatePartitions(local, validateOnly) {
			errs[idx[j]] = e
		}
		return
	}
	if err != nil {
		for _, i := range idx {
			errs[i] = forwardError(err)
		}
		return
	}
	byName := map[string]error{}
	seen := map[string]bool{}
	for _, t := range kresp.(*kmsg.CreatePartitionsResponse).Topics {
		byName[t.Topic], seen[t.Topic] = codeErr(t.ErrorCode, t.ErrorMessage), true
	}
	for _, i := range idx {
		if !seen[incs[i].Topic] {
			errs[i] = &controller.Error{Code: kerr.UnknownServerError, Message: "the controller's response left this topic out"}
			continue
		}
		errs[i] = byName[incs[i].Topic]
	}
}

// forwardWhole forwards a request the client was authorized for as a
// whole (ElectLeaders, AlterPartitionReassignments,
// ListPartitionReassignments: cluster-level ACLs) after the local
// controller answered NOT_CONTROLLER, at req's version (the client's),
// and returns the controller's response. notCtl
// tells a NOT_CONTROLLER response. ok is false when the caller must
// answer itself: no forwarder, or this broker became the controller
// (errLocal true: run locally again); otherwise err is the forwarding
// failure to answer with.
func (b *Broker) forwardWhole(req kmsg.Request, timeoutMillis int32, notCtl func(kmsg.Response) bool) (resp kmsg.Response, err *controller.Error, ok, errLocal bool) {
	if b.Forward == nil {
		return nil, nil, false, false
	}
	ctx, cancel := b.forwardContext(timeoutMillis)
	defer cancel()
	kresp, ferr := b.Forward.Send(ctx, req, notCtl)
	switch {
	case errors.Is(ferr, forward.ErrLocal):
		return nil, nil, false, true
	case ferr != nil:
		return nil, forwardError(ferr), true, false
	}
	return kresp, nil, true, false
}

// electionForward forwards an ElectLeaders request whose local answer was
// NOT_CONTROLLER; see forwardWhole. A nil response means answer locally
// (with local re-run when again is true).
func (b *Broker) electionForward(req *kmsg.ElectLeadersRequest) (resp *kmsg.ElectLeadersResponse, fail *controller.Error, again bool) {
	fwd := *req // a copy at the client's version: what is sent is not the client's request
	r, err, ok, local := b.forwardWhole(&fwd, req.TimeoutMillis, func(r kmsg.Response) bool {
		er := r.(*kmsg.ElectLeadersResponse)
		if er.ErrorCode == kerr.NotController.Code {
			return true
		}
		for _, t := range er.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode == kerr.NotController.Code {
					return true
				}
			}
		}
		return false
	})
	if !ok || err != nil {
		return nil, err, local
	}
	return r.(*kmsg.ElectLeadersResponse), nil, false
}
