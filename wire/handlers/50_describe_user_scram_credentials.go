package handlers

// DescribeUserScramCredentials: v0
//
// Behaviour: as Kafka 3.9's ZkAdminManager.describeUserScramCredentials,
// from /config/users in the metadata store (read on a task goroutine, not
// the connection's). No users (null or empty) = every user that has a
// SCRAM credential, sorted; named users in request order, once each: ""
// → RESOURCE_NOT_FOUND "Username must not be empty", a name asked twice →
// DUPLICATE_RESOURCE, a user without credentials → RESOURCE_NOT_FOUND
// "Attempt to describe a user credential that does not exist: <u>". Each
// credential is reported as its mechanism code and iterations, never the
// salt or keys. A store that cannot be read → UNKNOWN_SERVER_ERROR.

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/usercreds"
	"gregor/wire"
	"gregor/wire/security/acl"
	"gregor/wire/security/sasl"
)

func init() { register(50, 0, 0, handleDescribeUserScramCredentials) }

func handleDescribeUserScramCredentials(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	if !b.authorizeCluster(rc, acl.OpDescribe) {
		// DescribeUserScramCredentialsRequest.getErrorResponse: the code
		// at the top and in one result per asked user (without its name).
		resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
		msg := kerr.ClusterAuthorizationFailed.Description
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, &msg
		for range req.Users {
			r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
			r.ErrorCode, r.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, &msg
			resp.Results = append(resp.Results, r)
		}
		return wire.Now(wire.Response{Msg: resp})
	}
	return b.later(func() wire.Response { return wire.Response{Msg: b.describeUserScram(req)} })
}

func (b *Broker) describeUserScram(req *kmsg.DescribeUserSCRAMCredentialsRequest) *kmsg.DescribeUserSCRAMCredentialsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	fail := func(err error) *kmsg.DescribeUserSCRAMCredentialsResponse {
		resp.ErrorCode = kerr.UnknownServerError.Code
		msg := "Error processing describe user SCRAM credential configs request: " + err.Error()
		resp.ErrorMessage = &msg
		resp.Results = nil
		return resp
	}
	if b.Users == nil {
		return fail(errNoUserStore)
	}
	result := func(user string, code int16, msg string) kmsg.DescribeUserSCRAMCredentialsResponseResult {
		r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		r.User, r.ErrorCode = user, code
		if msg != "" {
			r.ErrorMessage = &msg
		}
		return r
	}
	// describe reads one user; explicit: a user without credentials is an error.
	describe := func(user string, explicit bool) (kmsg.DescribeUserSCRAMCredentialsResponseResult, bool) {
		cfg, _, err := usercreds.ReadConfig(b.Users, user)
		if err != nil {
			return result(user, kerr.UnknownServerError.Code, err.Error()), true
		}
		r := result(user, 0, "")
		found := false
		for _, m := range sasl.ScramMechanisms {
			v, ok := cfg[m.Name]
			if !ok {
				continue
			}
			found = true
			c, err := sasl.ParseScramCredential(v)
			if err != nil {
				return result(user, kerr.UnknownServerError.Code, err.Error()), true
			}
			ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
			ci.Mechanism, ci.Iterations = m.Type, int32(c.Iterations)
			r.CredentialInfos = append(r.CredentialInfos, ci)
		}
		if !found {
			if !explicit {
				return r, false
			}
			return result(user, kerr.ResourceNotFound.Code, "Attempt to describe a user credential that does not exist: "+user), true
		}
		return r, true
	}
	if len(req.Users) == 0 {
		users, err := usercreds.ListUsers(b.Users)
		if err != nil {
			return fail(err)
		}
		sort.Strings(users)
		for _, u := range users {
			if r, ok := describe(u, false); ok {
				resp.Results = append(resp.Results, r)
			}
		}
		return resp
	}
	count := map[string]int{}
	for _, u := range req.Users {
		count[u.Name]++
	}
	done := map[string]bool{}
	for _, u := range req.Users {
		name := u.Name
		if done[name] {
			continue
		}
		done[name] = true
		switch {
		case name == "":
			resp.Results = append(resp.Results, result(name, kerr.ResourceNotFound.Code, "Username must not be empty"))
		case count[name] > 1:
			resp.Results = append(resp.Results, result(name, kerr.DuplicateResource.Code,
				"Cannot describe SCRAM credentials for the same user twice in a single request: "+name))
		default:
			r, _ := describe(name, true)
			resp.Results = append(resp.Results, r)
		}
	}
	return resp
}
