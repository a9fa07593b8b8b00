package configs

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"gregor/cmd/internal/clientutil"
	"gregor/quota/clientquota"
	"gregor/replication/metastore"
	"gregor/wire/security/sasl"
)

// Clients is the entity type of client-id quotas (--entity-type clients).
const Clients = "clients"

// quotaPart is one entity of a quota command: its type (users or
// clients) and name ("" = the default entity, --entity-default,
// --user-defaults, --client-defaults); named false = every entity of
// the type (describe only).
type quotaPart struct {
	typ   string
	name  string
	named bool
}

// quotaParts reads the entity types and names of a users/clients command
// from the raw arguments in order, as ConfigCommand pairs the i-th
// --entity-type with the i-th --entity-name / --entity-default; --user,
// --client, --user-defaults and --client-defaults name their type.
// A users+clients pair is a (user, client-id) entity.
func quotaParts(args []string) ([]quotaPart, error) {
	var types, names []string
	var defaults []bool
	value := func(i int, a string) (string, int) {
		if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "--") {
			return v, i
		}
		if i+1 < len(args) {
			return args[i+1], i + 1
		}
		return "", i
	}
	var parts []quotaPart
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag, _, _ := strings.Cut(a, "=")
		switch flag {
		case "--entity-type":
			var v string
			v, i = value(i, a)
			types = append(types, v)
		case "--entity-name":
			var v string
			v, i = value(i, a)
			names, defaults = append(names, v), append(defaults, false)
		case "--entity-default":
			names, defaults = append(names, ""), append(defaults, true)
		case "--user", "--client":
			var v string
			v, i = value(i, a)
			parts = append(parts, quotaPart{typ: flag[2:] + "s", name: v, named: true})
		case "--user-defaults", "--client-defaults":
			parts = append(parts, quotaPart{typ: strings.TrimSuffix(flag[2:], "-defaults") + "s", named: true})
		}
	}
	if len(parts) > 0 && len(types) > 0 {
		return nil, clientutil.Usage("--entity-{type,name,default} should not be used in conjunction with specific entity flags")
	}
	if len(names) > len(types) && len(parts) == 0 {
		return nil, clientutil.Usage("More entity names specified than entity types")
	}
	for i, t := range types {
		p := quotaPart{typ: t}
		if i < len(names) {
			p.name, p.named = names[i], true
		}
		parts = append(parts, p)
	}
	seen := map[string]bool{}
	for _, p := range parts {
		if seen[p.typ] {
			return nil, clientutil.Usage("Duplicate entity type(s) specified: %s", p.typ)
		}
		seen[p.typ] = true
		if p.typ != Users && p.typ != Clients {
			return nil, clientutil.Usage("Only 'users' and 'clients' entity types may be specified together")
		}
	}
	// users before clients, whatever the order on the command line.
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].typ == Users && parts[j].typ == Clients })
	return parts, nil
}

// isQuotaCommand reports whether a users/clients command is about client
// quotas: every clients command, users with nested clients or a default
// user, and a users --alter whose keys are quota keys.
func isQuotaCommand(o Options, parts []quotaPart) bool {
	if len(parts) > 1 || len(parts) == 1 && parts[0].typ == Clients {
		return true
	}
	if len(parts) == 1 && parts[0].named && parts[0].name == "" {
		return true
	}
	if o.Alter {
		keys, _ := quotaAlterKeys(o)
		return len(keys) > 0
	}
	return false
}

// quotaAlterKeys are the --add-config and --delete-config keys that are
// quota keys.
func quotaAlterKeys(o Options) ([]string, error) {
	var keys []string
	if o.AddConfig != "" {
		k, _, err := ParseAddConfig(o.AddConfig)
		if err != nil {
			return nil, clientutil.Usage("%v", err)
		}
		keys = k
	}
	var out []string
	for _, k := range append(keys, ParseDeleteConfig(o.DeleteConfig)...) {
		if _, ok := clientquota.TypeOfKey(k); ok {
			out = append(out, k)
		}
	}
	return out, nil
}

// quotaAlter is a parsed quota --alter: the values to set and keys to
// delete, checked as ConfigCommand does before connecting.
type quotaAlter struct {
	set     map[string]float64
	order   []string
	deletes []string
}

func parseQuotaAlter(o Options, parts []quotaPart) (quotaAlter, error) {
	var q quotaAlter
	for _, p := range parts {
		if !p.named {
			return q, clientutil.Usage("--entity-name or --entity-default must be specified with each --entity-type for --alter")
		}
	}
	what := "quota"
	if parts[0].typ == Users && len(parts) == 1 {
		what = "quota and SCRAM credential"
	}
	var keys []string
	vals := map[string]string{}
	if o.AddConfig != "" {
		var err error
		if keys, vals, err = ParseAddConfig(o.AddConfig); err != nil {
			return q, clientutil.Usage("%v", err)
		}
	}
	q.deletes = ParseDeleteConfig(o.DeleteConfig)
	q.set = map[string]float64{}
	for _, k := range append(slices.Clone(keys), q.deletes...) {
		if _, ok := clientquota.TypeOfKey(k); ok {
			continue
		}
		if _, scram := sasl.ScramByName(k); scram && what != "quota" {
			return q, clientutil.Usage("SCRAM credentials (%s) and quotas cannot be altered in one command here; alter them separately", k)
		}
		typ := parts[0].typ
		if len(parts) > 1 {
			typ = Clients
		}
		return q, clientutil.Usage("Only %s configs can be added for '%s' using --bootstrap-server. Unexpected config names: %s", what, typ, k)
	}
	for _, k := range keys {
		v, err := strconv.ParseFloat(vals[k], 64)
		if err != nil {
			return q, clientutil.Usage("Cannot parse quota configuration value for %s: %s", k, vals[k])
		}
		q.set[k] = v
		q.order = append(q.order, k)
	}
	return q, nil
}

// kadmEntity is the AlterClientQuotas entity of named parts.
func kadmEntity(parts []quotaPart) kadm.ClientQuotaEntity {
	var e kadm.ClientQuotaEntity
	for _, p := range parts {
		c := kadm.ClientQuotaEntityComponent{Type: "user"}
		if p.typ == Clients {
			c.Type = "client-id"
		}
		if p.name != "" {
			n := p.name
			c.Name = &n
		}
		e = append(e, c)
	}
	return e
}

// quotaEntityString is ConfigCommand's describe name of an entity:
// "user-principal 'u', client-id 'c'", "the default client-id".
func quotaEntityString(e kadm.ClientQuotaEntity) string {
	var out []string
	for _, typ := range []string{"user", "client-id"} {
		for _, c := range e {
			if c.Type != typ {
				continue
			}
			kind := "client-id"
			if typ == "user" {
				kind = "user-principal"
			}
			if c.Name == nil {
				out = append(out, "the default "+kind)
			} else {
				out = append(out, fmt.Sprintf("%s '%s'", kind, *c.Name))
			}
		}
	}
	return strings.Join(out, ", ")
}

// describeComponents is ConfigCommand's getAllClientQuotasConfigs
// filter: a name matches exactly, a default the default entity, no name
// any entity of the type; strict (containsOnly).
func describeComponents(parts []quotaPart) []kadm.DescribeClientQuotaComponent {
	var out []kadm.DescribeClientQuotaComponent
	for _, p := range parts {
		c := kadm.DescribeClientQuotaComponent{Type: "user"}
		if p.typ == Clients {
			c.Type = "client-id"
		}
		switch {
		case !p.named:
			c.MatchType = 2
		case p.name == "":
			c.MatchType = 1
		default:
			n := p.name
			c.MatchName, c.MatchType = &n, 0
		}
		out = append(out, c)
	}
	return out
}

// runQuotas is a users/clients quota command over --bootstrap-server:
// --describe prints "Quota configs for <entity> are k=v, k2=v2" per
// entity (values as Java prints doubles); --alter fails on deleting a
// key the entity does not have ("Invalid config(s): k"), sends one
// AlterClientQuotas entry and prints "Completed updating config for
// user u." / "Completed updating default config for clients in the
// cluster.".
func runQuotas(ctx context.Context, o Options, adm *kadm.Client, parts []quotaPart, stdout io.Writer) error {
	if !o.Alter {
		return describeQuotas(ctx, adm, parts, stdout)
	}
	q, err := parseQuotaAlter(o, parts)
	if err != nil {
		return err
	}
	old, err := adm.DescribeClientQuotas(ctx, true, describeComponents(parts))
	if err != nil {
		return err
	}
	have := map[string]bool{}
	if len(old) > 0 {
		for _, v := range old[0].Values {
			have[v.Key] = true
		}
	}
	var invalid []string
	for _, k := range q.deletes {
		if !have[k] {
			invalid = append(invalid, k)
		}
	}
	if len(invalid) > 0 {
		return fmt.Errorf("Invalid config(s): %s", strings.Join(invalid, ","))
	}
	entry := kadm.AlterClientQuotaEntry{Entity: kadmEntity(parts)}
	for _, k := range q.order {
		entry.Ops = append(entry.Ops, kadm.AlterClientQuotaOp{Key: k, Value: q.set[k]})
	}
	for _, k := range q.deletes {
		entry.Ops = append(entry.Ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
	}
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{entry})
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Err != nil {
			if r.ErrMessage != "" {
				return fmt.Errorf("%w: %s", r.Err, r.ErrMessage)
			}
			return r.Err
		}
	}
	head := parts[0]
	if head.name != "" {
		fmt.Fprintf(stdout, "Completed updating config for %s %s.\n", strings.TrimSuffix(head.typ, "s"), head.name)
	} else {
		fmt.Fprintf(stdout, "Completed updating default config for %s in the cluster.\n", head.typ)
	}
	return nil
}

func describeQuotas(ctx context.Context, adm *kadm.Client, parts []quotaPart, stdout io.Writer) error {
	quotas, err := adm.DescribeClientQuotas(ctx, true, describeComponents(parts))
	if err != nil {
		return err
	}
	for _, d := range quotas {
		vals := slices.Clone(d.Values)
		sort.Slice(vals, func(i, j int) bool { return vals[i].Key < vals[j].Key })
		var kv []string
		for _, v := range vals {
			kv = append(kv, v.Key+"="+clientquota.FormatDouble(v.Value))
		}
		fmt.Fprintf(stdout, "Quota configs for %s are %s\n", quotaEntityString(d.Entity), strings.Join(kv, ", "))
	}
	return nil
}

// zkQuotaEntity is the znode entity of named parts.
func zkQuotaEntity(parts []quotaPart) clientquota.Entity {
	var e clientquota.Entity
	for _, p := range parts {
		n := clientquota.Default
		if p.name != "" {
			n = clientquota.Sanitize(p.name)
		}
		if p.typ == Users {
			e.User = n
		} else {
			e.Client = n
		}
	}
	return e
}

// zkEntityString is Kafka 2.x ConfigCommand's ConfigEntity name:
// "user-principal 'u', client-id 'c'", "default client-id".
func zkEntityString(e clientquota.Entity) string {
	part := func(kind, s string) string {
		if s == clientquota.Default {
			return "default " + kind
		}
		n, err := clientquota.Desanitize(s)
		if err != nil {
			n = s
		}
		return fmt.Sprintf("%s '%s'", kind, n)
	}
	var out []string
	if e.User != "" {
		out = append(out, part("user-principal", e.User))
	}
	if e.Client != "" {
		out = append(out, part("client-id", e.Client))
	}
	return strings.Join(out, ", ")
}

// runQuotasZooKeeper is a quota command with --zookeeper, as Kafka 2.x's
// ConfigCommand: --alter validates the values as the broker does
// (clientquota.FormatValue), writes the entity's znode (keeping its
// other keys) and a change notification, and prints "Completed updating
// config for entity: user-principal 'u'."; --describe prints "Configs
// for user-principal 'u' are k=v,k2=v2" for each matching entity.
func runQuotasZooKeeper(o Options, store metastore.Store, parts []quotaPart, stdout io.Writer) error {
	if o.Alter {
		q, err := parseQuotaAlter(o, parts)
		if err != nil {
			return err
		}
		set := map[string]string{}
		for _, k := range q.order {
			s, err := clientquota.FormatValue(k, q.set[k])
			if err != nil {
				return clientutil.Usage("%v", err)
			}
			set[k] = s
		}
		e := zkQuotaEntity(parts)
		err = clientquota.Update(store, e, func(cfg map[string]string) error {
			var invalid []string
			for _, k := range q.deletes {
				if _, ok := cfg[k]; !ok {
					invalid = append(invalid, k)
				}
				delete(cfg, k)
			}
			if len(invalid) > 0 {
				return fmt.Errorf("Invalid config(s): %s", strings.Join(invalid, ","))
			}
			for k, v := range set {
				cfg[k] = v
			}
			return nil
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Completed updating config for entity: %s.\n", zkEntityString(e))
		return nil
	}
	ents, err := clientquota.List(store)
	if err != nil {
		return err
	}
	want := zkQuotaEntity(parts)
	sort.Slice(ents, func(i, j int) bool { return ents[i].Path() < ents[j].Path() })
	for _, e := range ents {
		ok := true
		for _, p := range parts {
			got, w := e.Client, want.Client
			if p.typ == Users {
				got, w = e.User, want.User
			}
			if got == "" || p.named && got != w {
				ok = false
			}
		}
		if len(parts) == 1 && (parts[0].typ == Users && e.Client != "" || parts[0].typ == Clients && e.User != "") {
			ok = false
		}
		if !ok {
			continue
		}
		cfg, _, err := clientquota.Read(store, e)
		if err != nil {
			return err
		}
		var kv []string
		for k, v := range cfg {
			if _, q := clientquota.TypeOfKey(k); q {
				kv = append(kv, k+"="+v)
			}
		}
		sort.Strings(kv)
		fmt.Fprintf(stdout, "Configs for %s are %s\n", zkEntityString(e), strings.Join(kv, ","))
	}
	return nil
}

// resolveQuota recognises a client quota command (resolve calls it once
// the action and connection flags are checked): ok is true when the
// command is one, with its entity parts in o.quota.
func (o *Options) resolveQuota() (ok bool, err error) {
	if o.EntityType != Users && o.EntityType != Clients && o.User == "" && o.Client == "" && !o.UserDefaults && !o.ClientDefaults {
		return false, nil
	}
	parts, err := quotaParts(o.Args)
	if err != nil {
		return false, err
	}
	if len(parts) == 0 { // built without raw arguments (tests)
		parts = []quotaPart{{typ: o.EntityType, name: o.EntityName, named: o.EntityName != "" || o.EntityDefault}}
	}
	if !isQuotaCommand(*o, parts) {
		if parts[0].typ == Users && parts[0].named { // --user u: SCRAM credentials
			o.EntityType, o.EntityName = Users, parts[0].name
		}
		return false, nil
	}
	o.quota = parts
	if o.All {
		return true, clientutil.Usage("Option \"[all]\" can't be used with --entity-type users or clients")
	}
	if o.Alter {
		if o.AddConfig == "" && o.DeleteConfig == "" {
			return true, clientutil.Usage("At least one of --add-config or --delete-config must be specified with --alter")
		}
		_, err := parseQuotaAlter(*o, parts)
		return true, err
	}
	if o.AddConfig != "" || o.DeleteConfig != "" {
		return true, clientutil.Usage("Option \"[add-config]\" / \"[delete-config]\" can only be used with --alter")
	}
	return true, nil
}
