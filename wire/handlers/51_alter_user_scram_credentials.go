package handlers

// AlterUserScramCredentials: v0
//
// Behaviour: as Kafka 3.9's ZkAdminManager.alterUserScramCredentials,
// writing /config/users/<user> and a /config/changes notification through
// the metadata store, from any broker (every broker's credential cache
// follows the notification). Per user, in this order of checks:
//   - empty name → UNACCEPTABLE_CREDENTIAL "Username must not be empty";
//   - unknown mechanism → UNSUPPORTED_SASL_MECHANISM "Unknown SCRAM mechanism";
//   - iterations outside [4096, 16384] → UNACCEPTABLE_CREDENTIAL "Too few
//     iterations" / "Too many iterations";
//   - the same (user, mechanism) twice → DUPLICATE_RESOURCE;
//   - deleting a credential the user does not have → RESOURCE_NOT_FOUND;
//   - else the user's deletions and upsertions are written at once.
//
// An upsertion carries the salt and the salted password (the client
// salts); the broker stores StoredKey/ServerKey derived from them in
// ScramCredentialUtils' format. The store is written on a task goroutine.

import (
	"errors"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/replication/usercreds"
	"gregor/wire"
	"gregor/wire/security/acl"
	"gregor/wire/security/sasl"
)

func init() { register(51, 0, 0, handleAlterUserScramCredentials) }

func handleAlterUserScramCredentials(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.AlterUserSCRAMCredentialsRequest)
	if !b.authorizeCluster(rc, acl.OpAlter) {
		// AlterUserScramCredentialsRequest.getErrorResponse: every named
		// user, sorted, once, with the error.
		resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
		users := map[string]bool{}
		for _, d := range req.Deletions {
			users[d.Name] = true
		}
		for _, u := range req.Upsertions {
			users[u.Name] = true
		}
		msg := kerr.ClusterAuthorizationFailed.Description
		for _, u := range slices.Sorted(maps.Keys(users)) {
			r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
			r.User, r.ErrorCode, r.ErrorMessage = u, kerr.ClusterAuthorizationFailed.Code, &msg
			resp.Results = append(resp.Results, r)
		}
		return wire.Now(wire.Response{Msg: resp})
	}
	return b.later(func() wire.Response { return wire.Response{Msg: b.alterUserScram(req)} })
}

// userError is one user's error code and message.
type userError struct {
	code int16
	msg  string
}

// errDeleteMissing aborts a user's update: a deletion names a credential
// the user does not have.
var errDeleteMissing = errors.New("Attempt to delete a user credential that does not exist")

func (b *Broker) alterUserScram(req *kmsg.AlterUserSCRAMCredentialsRequest) *kmsg.AlterUserSCRAMCredentialsResponse {
	resp := req.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	add := func(user string, code int16, msg string) {
		r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		r.User, r.ErrorCode = user, code
		if msg != "" {
			r.ErrorMessage = &msg
		}
		resp.Results = append(resp.Results, r)
	}
	// 1. Illegal requests, by user (an upsertion's reason wins, as in Kafka's map merge).
	var order []string // users in first-seen order
	seen := map[string]bool{}
	note := func(u string) {
		if !seen[u] {
			seen[u] = true
			order = append(order, u)
		}
	}
	illegal := map[string]userError{}
	for _, d := range req.Deletions {
		note(d.Name)
		if d.Name == "" {
			illegal[d.Name] = userError{kerr.UnacceptableCredential.Code, "Username must not be empty"}
		} else if _, ok := sasl.ScramByType(d.Mechanism); !ok {
			illegal[d.Name] = userError{kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism"}
		}
	}
	for _, u := range req.Upsertions {
		note(u.Name)
		m, ok := sasl.ScramByType(u.Mechanism)
		switch {
		case u.Name == "":
			illegal[u.Name] = userError{kerr.UnacceptableCredential.Code, "Username must not be empty"}
		case !ok:
			illegal[u.Name] = userError{kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism"}
		case int(u.Iterations) < m.MinIterations:
			illegal[u.Name] = userError{kerr.UnacceptableCredential.Code, "Too few iterations"}
		case int(u.Iterations) > m.MaxIterations:
			illegal[u.Name] = userError{kerr.UnacceptableCredential.Code, "Too many iterations"}
		}
	}
	for _, u := range order {
		if e, ok := illegal[u]; ok {
			add(u, e.code, e.msg)
		}
	}
	// 2. The same (user, mechanism) twice.
	type pair struct {
		user string
		mech int8
	}
	pairs := map[pair]int{}
	for _, d := range req.Deletions {
		pairs[pair{d.Name, d.Mechanism}]++
	}
	for _, u := range req.Upsertions {
		pairs[pair{u.Name, u.Mechanism}]++
	}
	dup := map[string]bool{}
	for p, n := range pairs {
		if _, bad := illegal[p.user]; n > 1 && !bad {
			dup[p.user] = true
		}
	}
	for _, u := range order {
		if dup[u] {
			add(u, kerr.DuplicateResource.Code, "A user credential cannot be altered twice in the same request")
		}
	}
	// 3. Write each remaining user's changes at once.
	for _, user := range order {
		if _, bad := illegal[user]; bad || dup[user] {
			continue
		}
		if b.Users == nil {
			add(user, kerr.UnknownServerError.Code, errNoUserStore.Error())
			continue
		}
		err := usercreds.Update(b.Users, user, func(cfg map[string]string) error {
			for _, d := range req.Deletions {
				if d.Name != user {
					continue
				}
				m, _ := sasl.ScramByType(d.Mechanism)
				if _, ok := cfg[m.Name]; !ok {
					return errDeleteMissing
				}
				delete(cfg, m.Name)
			}
			for _, u := range req.Upsertions {
				if u.Name != user {
					continue
				}
				m, _ := sasl.ScramByType(u.Mechanism)
				cfg[m.Name] = m.CredentialFromSalted(u.SaltedPassword, u.Salt, int(u.Iterations)).String()
			}
			return nil
		})
		switch {
		case errors.Is(err, errDeleteMissing):
			add(user, kerr.ResourceNotFound.Code, errDeleteMissing.Error())
		case err != nil:
			b.Log.Warn("altering SCRAM credentials failed", zap.String("user", user), zap.Error(err))
			add(user, kerr.UnknownServerError.Code, err.Error())
		default:
			add(user, 0, "")
		}
	}
	return resp
}
