package handlers

// DescribeClientQuotas: v0-v1
//
// Behaviour: as Kafka 3.9's ZkAdminManager.describeClientQuotas, read
// from the store on a task goroutine. Needs DESCRIBE_CONFIGS on the
// cluster, else CLUSTER_AUTHORIZATION_FAILED. Components: one per entity
// type ("user", "client-id", "ip"); match type 0 (exact name), 1 (the
// default entity), 2 (any entity of the type). A type given twice,
// an empty type, ip with user or client-id, an exact match without a
// name or an unknown match type → INVALID_REQUEST; any other type →
// UNSUPPORTED_VERSION "Custom entity type 't' not supported". Entities
// match when every component matches its part; a type without a
// component matches anything unless Strict, which then requires the
// entity to have no such part. Only entities with at least one quota key
// are listed (a user's znode holding only SCRAM credentials is not), with
// their quota values as doubles. IP quotas are not stored (errIPQuotas):
// an ip filter lists nothing.

import (
	"errors"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/quota/clientquota"
	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(48, 0, 1, handleDescribeClientQuotas) }

func handleDescribeClientQuotas(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DescribeClientQuotasRequest)
	if !b.authorizeCluster(rc, acl.OpDescribeConfigs) {
		resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
		msg := kerr.ClusterAuthorizationFailed.Description
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, &msg
		return wire.Now(wire.Response{Msg: resp})
	}
	return b.later(func() wire.Response { return wire.Response{Msg: b.describeClientQuotas(req)} })
}

// quotaFilter is one component: part is the entity's znode name for the
// type ("" = the entity has none), matched as the component asks.
type quotaFilter struct {
	set   bool   // a component for this type was given
	match int8   // 0 exact, 1 default, 2 any
	name  string // sanitized, for exact
}

func (f quotaFilter) matches(part string, strict bool) bool {
	if !f.set {
		return part == "" || !strict
	}
	switch f.match {
	case 0:
		return part == f.name
	case 1:
		return part == clientquota.Default
	default:
		return part != ""
	}
}

type errUnsupported struct{ error }

func parseQuotaFilter(req *kmsg.DescribeClientQuotasRequest) (user, client quotaFilter, ip bool, err error) {
	for _, c := range req.Components {
		var f *quotaFilter
		switch c.EntityType {
		case quotaEntityUser:
			f = &user
		case quotaEntityClientID:
			f = &client
		case quotaEntityIP:
			if ip {
				return user, client, ip, errors.New("Duplicate ip filter component entity type")
			}
			ip = true
			continue
		case "":
			return user, client, ip, errors.New("Unexpected empty filter component entity type")
		default:
			return user, client, ip, errUnsupported{fmt.Errorf("Custom entity type '%s' not supported", c.EntityType)}
		}
		if f.set {
			kind := "user"
			if f == &client {
				kind = "client"
			}
			return user, client, ip, fmt.Errorf("Duplicate %s filter component entity type", kind)
		}
		f.set, f.match = true, int8(c.MatchType)
		switch c.MatchType {
		case 0:
			if c.Match == nil {
				return user, client, ip, errors.New("Exact match of a filter component needs an entity name")
			}
			f.name = clientquota.Sanitize(*c.Match)
		case 1, 2:
		default:
			return user, client, ip, fmt.Errorf("Unexpected match type: %d", c.MatchType)
		}
	}
	if ip && (user.set || client.set) {
		return user, client, ip, errors.New("Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component.")
	}
	return user, client, ip, nil
}

func (b *Broker) describeClientQuotas(req *kmsg.DescribeClientQuotasRequest) *kmsg.DescribeClientQuotasResponse {
	resp := req.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	fail := func(e *kerr.Error, msg string) *kmsg.DescribeClientQuotasResponse {
		resp.ErrorCode, resp.ErrorMessage, resp.Entries = e.Code, &msg, nil
		return resp
	}
	user, client, ip, err := parseQuotaFilter(req)
	var unsupported errUnsupported
	switch {
	case errors.As(err, &unsupported):
		return fail(kerr.UnsupportedVersion, err.Error())
	case err != nil:
		return fail(kerr.InvalidRequest, err.Error())
	case ip:
		return resp // IP quotas are never stored here
	case b.QuotaStore == nil:
		return fail(kerr.UnknownServerError, errNoQuotaStore.Error())
	}
	ents, err := clientquota.List(b.QuotaStore)
	if err != nil {
		return fail(kerr.UnknownServerError, err.Error())
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Path() < ents[j].Path() })
	for _, e := range ents {
		if !user.matches(e.User, req.Strict) || !client.matches(e.Client, req.Strict) {
			continue
		}
		cfg, _, err := clientquota.Read(b.QuotaStore, e)
		if err != nil {
			return fail(kerr.UnknownServerError, err.Error())
		}
		vals, _ := clientquota.Values(cfg)
		if len(vals) == 0 {
			continue
		}
		en := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, p := range quotaEntityParts(e) {
			pe := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			pe.Type, pe.Name = p.Type, p.Name
			en.Entity = append(en.Entity, pe)
		}
		keys := make([]string, 0, len(vals))
		for k := range vals {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, vals[k]
			en.Values = append(en.Values, v)
		}
		resp.Entries = append(resp.Entries, en)
	}
	return resp
}
