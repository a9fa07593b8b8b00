package handlers

// AlterClientQuotas: v0-v1
//
// Behaviour: as Kafka 3.9's ZkAdminManager.alterClientQuotas, on a task
// goroutine (the store is not touched on the connection's). Needs
// ALTER_CONFIGS on the cluster, else every entry answers
// CLUSTER_AUTHORIZATION_FAILED. Each entry is validated whole before
// anything is written, and answers on its own (Kafka's per-entity
// ApiError): an empty entity, an empty name, an unknown or repeated
// entity type → INVALID_REQUEST; an IP entity → INVALID_REQUEST (IP
// connection-rate quotas are not enforced here, so not stored); an
// unknown key → INVALID_REQUEST "Invalid configuration key k"; a byte
// rate that is not integral → "Configuration producer_byte_rate must be
// a LONG value"; a value ≤ 0, NaN or infinite → INVALID_REQUEST "Quota k
// must be greater than 0" (KRaft's check: ZooKeeper-mode Kafka stores
// such values). A key set and removed in one entry → INVALID_REQUEST.
// Remove of an absent key is a no-op. The entity's znode
// (/config/users/<u>, /config/clients/<c>, /config/users/<u>/clients/<c>,
// <default> for a null name) keeps its other keys (SCRAM credentials)
// and gets a /config/changes notification, so every broker re-reads it.
// ValidateOnly validates and writes nothing. A store error →
// UNKNOWN_SERVER_ERROR for that entry.

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/quota/clientquota"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(49, 0, 1, handleAlterClientQuotas) }

func handleAlterClientQuotas(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.AlterClientQuotasRequest)
	if !b.authorizeCluster(rc, acl.OpAlterConfigs) {
		resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
		for _, en := range req.Entries {
			resp.Entries = append(resp.Entries, alterQuotaResult(en.Entity, kerr.ClusterAuthorizationFailed, ""))
		}
		return wire.Now(wire.Response{Msg: resp})
	}
	return b.later(func() wire.Response { return wire.Response{Msg: b.alterClientQuotas(req)} })
}

func alterQuotaResult(ent []kmsg.AlterClientQuotasRequestEntryEntity, err *kerr.Error, msg string) kmsg.AlterClientQuotasResponseEntry {
	r := kmsg.NewAlterClientQuotasResponseEntry()
	for _, p := range ent {
		e := kmsg.NewAlterClientQuotasResponseEntryEntity()
		e.Type, e.Name = p.Type, p.Name
		r.Entity = append(r.Entity, e)
	}
	if err != nil {
		r.ErrorCode = err.Code
		if msg == "" {
			msg = err.Description
		}
		r.ErrorMessage = &msg
	}
	return r
}

// quotaOps validates an entry's ops: the values to set (as stored) and
// the keys to remove. The error is the INVALID_REQUEST message.
func quotaOps(ops []kmsg.AlterClientQuotasRequestEntryOp) (set map[string]string, remove []string, err error) {
	set = map[string]string{}
	seen := map[string]bool{}
	for _, op := range ops {
		if seen[op.Key] {
			return nil, nil, fmt.Errorf("Duplicate quota key %s not updating quota for this entity", op.Key)
		}
		seen[op.Key] = true
		if op.Remove {
			if _, ok := clientquota.TypeOfKey(op.Key); !ok {
				return nil, nil, fmt.Errorf("Invalid configuration key %s", op.Key)
			}
			remove = append(remove, op.Key)
			continue
		}
		s, err := clientquota.FormatValue(op.Key, op.Value)
		if err != nil {
			return nil, nil, err
		}
		set[op.Key] = s
	}
	return set, remove, nil
}

func (b *Broker) alterClientQuotas(req *kmsg.AlterClientQuotasRequest) *kmsg.AlterClientQuotasResponse {
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	for _, en := range req.Entries {
		e, err := quotaEntity(en.Entity)
		if err != nil {
			resp.Entries = append(resp.Entries, alterQuotaResult(en.Entity, kerr.InvalidRequest, err.Error()))
			continue
		}
		set, remove, err := quotaOps(en.Ops)
		if err != nil {
			resp.Entries = append(resp.Entries, alterQuotaResult(en.Entity, kerr.InvalidRequest, err.Error()))
			continue
		}
		if req.ValidateOnly {
			resp.Entries = append(resp.Entries, alterQuotaResult(en.Entity, nil, ""))
			continue
		}
		if b.QuotaStore == nil {
			resp.Entries = append(resp.Entries, alterQuotaResult(en.Entity, kerr.UnknownServerError, errNoQuotaStore.Error()))
			continue
		}
		err = clientquota.Update(b.QuotaStore, e, func(cfg map[string]string) error {
			for _, k := range remove {
				delete(cfg, k)
			}
			for k, v := range set {
				cfg[k] = v
			}
			return nil
		})
		if err != nil {
			resp.Entries = append(resp.Entries, alterQuotaResult(en.Entity, kerr.UnknownServerError, err.Error()))
			continue
		}
		resp.Entries = append(resp.Entries, alterQuotaResult(en.Entity, nil, ""))
	}
	return resp
}
