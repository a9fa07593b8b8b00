package configs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/cmd/internal/clientutil"
	"gregor/replication/metastore"
	"gregor/replication/usercreds"
	"gregor/wire/security/sasl"
)

// Users is the entity type of SCRAM credentials (--entity-type users).
const Users = "users"

// defaultScramIterations is ConfigCommand's DefaultScramIterations, used
// when a credential gives no iterations=.
const defaultScramIterations = 4096

// userQuotaKeys are the quota configs of users (QuotaConfigs): they belong
// to client quotas, which Gregor does not enforce yet, so they are refused
// rather than stored and silently ignored.
var userQuotaKeys = map[string]bool{
	"producer_byte_rate": true, "consumer_byte_rate": true, "request_percentage": true,
	"controller_mutation_rate": true,
}

// scramCredentialRE is ConfigCommand's "(?:iterations=(-?[0-9]*),)?password=(.*)".
var scramCredentialRE = regexp.MustCompile(`^(?:iterations=(-?[0-9]*),)?password=(.*)$`)

// scramUpdate is a users --alter: the SCRAM mechanisms to set (with their
// iterations and password) and to delete.
type scramUpdate struct {
	set     []scramSet
	deletes []string
}

type scramSet struct {
	mech       sasl.ScramMechanism
	iterations int
	password   string
}

// parseUserAlter checks a users --alter's --add-config/--delete-config
// keys (SCRAM mechanisms only; quota keys refused with their reason) and
// parses each credential "[iterations=N,]password=P" as ConfigCommand.
func parseUserAlter(o Options) (scramUpdate, error) {
	var u scramUpdate
	var keys []string
	var vals map[string]string
	if o.AddConfig != "" {
		var err error
		if keys, vals, err = ParseAddConfig(o.AddConfig); err != nil {
			return u, clientutil.Usage("%v", err)
		}
	}
	deletes := ParseDeleteConfig(o.DeleteConfig)
	for _, k := range append(slices.Clone(keys), deletes...) {
		if false && userQuotaKeys[k] {
			return u, clientutil.Usage("user quota config %s is not supported: Gregor does not enforce client quotas yet; only SCRAM credentials (%s, %s) can be set for users", k, sasl.ScramSHA256, sasl.ScramSHA512)
		}
		if _, ok := sasl.ScramByName(k); !ok {
			return u, clientutil.Usage("Only quota and SCRAM credential configs can be added for 'users'. Unexpected config names: %s (Gregor serves SCRAM credentials, %s and %s)", k, sasl.ScramSHA256, sasl.ScramSHA512)
		}
	}
	for _, k := range keys {
		m, _ := sasl.ScramByName(k)
		g := scramCredentialRE.FindStringSubmatch(vals[k])
		if g == nil {
			return u, clientutil.Usage("Invalid credential property %s=%s", k, redactPassword(vals[k]))
		}
		it := defaultScramIterations
		if g[1] != "" && g[1] != "-1" {
			n, err := strconv.Atoi(g[1])
			if err != nil {
				return u, clientutil.Usage("Invalid credential property %s: iterations %q", k, g[1])
			}
			it = n
		}
		if it < m.MinIterations {
			return u, clientutil.Usage("Iterations %d is less than the minimum %d required for %s", it, m.MinIterations, m.Name)
		}
		u.set = append(u.set, scramSet{mech: m, iterations: it, password: g[2]})
	}
	u.deletes = deletes
	return u, nil
}

// redactPassword hides password=… in an echoed credential.
func redactPassword(s string) string {
	if i := strings.Index(s, "password="); i >= 0 {
		return s[:i] + "password=[hidden]"
	}
	return s
}

// checkUserOptions refuses what users support only for quotas (resolve
// calls it before connecting).
func checkUserOptions(o Options) error {
	if o.EntityDefault {
		return clientutil.Usage("--entity-default for users sets default user quotas, which Gregor does not enforce yet")
	}
	return nil
}

// runUsersZooKeeper is a users command with --zookeeper, as Kafka 2.x's
// ConfigCommand: --alter computes each credential itself (fresh salt) and
// writes /config/users/<u> plus a change notification; --describe prints
// the znode's configs as stored.
func runUsersZooKeeper(o Options, store metastore.Store, stdout io.Writer) error {
	if o.Alter {
		u, err := parseUserAlter(o)
		if err != nil {
			return err
		}
		creds := map[string]string{}
		for _, s := range u.set {
			c, err := s.mech.NewCredential(s.password, s.iterations)
			if err != nil {
				return err
			}
			creds[s.mech.Name] = c.String()
		}
		err = usercreds.Update(store, o.EntityName, func(cfg map[string]string) error {
			var invalid []string
			for _, k := range u.deletes {
				if _, ok := cfg[k]; !ok {
					invalid = append(invalid, k)
				}
			}
			if len(invalid) > 0 {
				return fmt.Errorf("Invalid config(s): %s", strings.Join(invalid, ","))
			}
			maps.Copy(cfg, creds)
			for _, k := range u.deletes {
				delete(cfg, k)
			}
			return nil
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Completed updating config for entity: user-principal '%s'.\n", o.EntityName)
		return nil
	}
	names := []string{o.EntityName}
	if o.EntityName == "" {
		var err error
		if names, err = usercreds.ListUsers(store); err != nil {
			return err
		}
		slices.Sort(names)
	}
	for _, n := range names {
		cfg, _, err := usercreds.ReadConfig(store, n)
		if err != nil {
			return err
		}
		if len(cfg) == 0 && o.EntityName == "" {
			continue // as Kafka: describing all users skips empty user nodes
		}
		parts := make([]string, 0, len(cfg))
		for _, k := range slices.Sorted(maps.Keys(cfg)) {
			parts = append(parts, k+"="+cfg[k])
		}
		fmt.Fprintf(stdout, "Configs for user-principal '%s' are %s\n", n, strings.Join(parts, ","))
	}
	return nil
}

// runUsers is a users command with --bootstrap-server, through
// AlterUserScramCredentials (the tool salts the password, as Kafka's
// admin client does) and DescribeUserScramCredentials.
func runUsers(ctx context.Context, o Options, adm *kadm.Client, stdout io.Writer) error {
	if o.Alter {
		u, err := parseUserAlter(o)
		if err != nil {
			return err
		}
		var dels []kadm.DeleteSCRAM
		for _, k := range u.deletes {
			m, _ := sasl.ScramByName(k)
			dels = append(dels, kadm.DeleteSCRAM{User: o.EntityName, Mechanism: kadm.ScramMechanism(m.Type)})
		}
		var ups []kadm.UpsertSCRAM
		for _, s := range u.set {
			salt, err := sasl.NewSalt()
			if err != nil {
				return err
			}
			salted, err := s.mech.SaltedPassword(s.password, salt, s.iterations)
			if err != nil {
				return err
			}
			ups = append(ups, kadm.UpsertSCRAM{User: o.EntityName, Mechanism: kadm.ScramMechanism(s.mech.Type),
				Iterations: int32(s.iterations), Salt: salt, SaltedPassword: salted})
		}
		res, err := adm.AlterUserSCRAMs(ctx, dels, ups)
		if err != nil {
			return err
		}
		for _, r := range res.Sorted() {
			if r.Err != nil {
				return clientutil.WithMessage(r.Err, r.ErrMessage)
			}
		}
		fmt.Fprintf(stdout, "Completed updating config for user %s.\n", o.EntityName)
		return nil
	}
	var users []string
	if o.EntityName != "" {
		users = []string{o.EntityName}
	}
	res, err := adm.DescribeUserSCRAMs(ctx, users...)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(res)) {
		r := res[name]
		if errors.Is(r.Err, kerr.ResourceNotFound) {
			continue // Kafka's DescribeUserScramCredentialsResult.users() leaves these out
		}
		if r.Err != nil {
			fmt.Fprintf(stdout, "Error retrieving SCRAM credential configs for user-principal '%s': %s\n", name, clientutil.WithMessage(r.Err, r.ErrMessage))
			continue
		}
		parts := make([]string, 0, len(r.CredInfos))
		for _, ci := range r.CredInfos {
			m, _ := sasl.ScramByType(int8(ci.Mechanism))
			parts = append(parts, fmt.Sprintf("%s=iterations=%d", m.Name, ci.Iterations))
		}
		fmt.Fprintf(stdout, "SCRAM credential configs for user-principal '%s' are %s\n", name, strings.Join(parts, ", "))
	}
	return nil
}
