package coordinator

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// FindCoordinatorResponse answers a FindCoordinator request at its version
// with lookup's answer per key: the batched CoordinatorKeys of v4+
// (KIP-699), or the one CoordinatorKey at the top level of v0–v3. A
// non-zero code gives that key node -1, no host, port -1 and the code's
// message. Both coordinators (groups, transactions) use it; lookup may
// block (it runs on the caller's goroutine).
func FindCoordinatorResponse(req *kmsg.FindCoordinatorRequest, lookup func(key string) (nodeID int32, host string, port int32, code int16)) *kmsg.FindCoordinatorResponse {
	keys := req.CoordinatorKeys
	if req.Version < 4 {
		keys = []string{req.CoordinatorKey}
	}
	resp := kmsg.NewPtrFindCoordinatorResponse()
	resp.Version = req.Version
	for _, key := range keys {
		co := kmsg.NewFindCoordinatorResponseCoordinator()
		co.Key = key
		co.NodeID, co.Host, co.Port, co.ErrorCode = lookup(key)
		if co.ErrorCode != 0 {
			co.NodeID, co.Host, co.Port = -1, "", -1
			msg := kerr.ErrorForCode(co.ErrorCode).Error()
			co.ErrorMessage = &msg
		}
		resp.Coordinators = append(resp.Coordinators, co)
	}
	if req.Version < 4 && len(resp.Coordinators) == 1 {
		co := resp.Coordinators[0]
		resp.ErrorCode, resp.ErrorMessage = co.ErrorCode, co.ErrorMessage
		resp.NodeID, resp.Host, resp.Port = co.NodeID, co.Host, co.Port
		resp.Coordinators = nil
	}
	return resp
}
