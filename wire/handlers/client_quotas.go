package handlers

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/quota/clientquota"
)

// The entity types of DescribeClientQuotas / AlterClientQuotas
// (ClientQuotaEntity.USER, CLIENT_ID, IP).
const (
	quotaEntityUser     = "user"
	quotaEntityClientID = "client-id"
	quotaEntityIP       = "ip"
)

// errNoQuotaStore answers the quota APIs of a broker built without a
// metadata store (unit tests only).
var errNoQuotaStore = errors.New("this broker has no client quota store")

// errIPQuotas refuses IP entities: connection_creation_rate (KIP-612 per
// IP) is not enforced by Gregor, so it is not stored either.
var errIPQuotas = errors.New("IP quota entities (connection_creation_rate) are not supported by this broker")

// quotaEntity parses an AlterClientQuotas entity into znode names as
// ZkAdminManager.parseAndSanitizeQuotaEntity: a null name is the default
// entity, "" is refused, a type given twice or unknown is refused.
func quotaEntity(parts []kmsg.AlterClientQuotasRequestEntryEntity) (clientquota.Entity, error) {
	var e clientquota.Entity
	if len(parts) == 0 {
		return e, errors.New("Invalid empty client quota entity")
	}
	seen := map[string]bool{}
	for _, p := range parts {
		if seen[p.Type] {
			return e, fmt.Errorf("Invalid client quota entity, duplicate entity entry %s", p.Type)
		}
		seen[p.Type] = true
		name := clientquota.Default
		if p.Name != nil {
			if *p.Name == "" {
				return e, fmt.Errorf("Empty %s not supported", p.Type)
			}
			name = clientquota.Sanitize(*p.Name)
		}
		switch p.Type {
		case quotaEntityUser:
			e.User = name
		case quotaEntityClientID:
			e.Client = name
		case quotaEntityIP:
			if len(parts) > 1 {
				return e, errors.New("Invalid quota entity combination, IP entity should not be used with user/client ID entity.")
			}
			return e, errIPQuotas
		default:
			return e, fmt.Errorf("Unhandled client quota entity type: %s", p.Type)
		}
	}
	return e, nil
}

// quotaEntityParts renders an entity as the response's (type, name)
// list, user first; the default entity has a null name.
func quotaEntityParts(e clientquota.Entity) [](struct {
	Type string
	Name *string
}) {
	var out []struct {
		Type string
		Name *string
	}
	add := func(typ, s string) {
		if s == "" {
			return
		}
		var name *string
		if s != clientquota.Default {
			n, err := clientquota.Desanitize(s)
			if err != nil {
				n = s
			}
			name = &n
		}
		out = append(out, struct {
			Type string
			Name *string
		}{typ, name})
	}
	add(quotaEntityUser, e.User)
	add(quotaEntityClientID, e.Client)
	return out
}
