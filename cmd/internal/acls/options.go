// Package acls is `gregor acls` (kafka-acls.sh, Kafka 3.9's AclCommand):
// --add, --remove and --list of ACLs either through a broker's
// CreateAcls / DescribeAcls / DeleteAcls (--bootstrap-server, with
// --command-config client properties) or straight in ZooKeeper's
// /kafka-acl* znodes, as AclCommand does through the AclAuthorizer
// (--authorizer-properties zookeeper.connect=…). Flags, validation
// messages, prompts and output are AclCommand's.
package acls

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"gregor/cmd/internal/clientutil"
	"gregor/wire/security/acl"
)

// Options are kafka-acls.sh's flags. Repeatable flags keep their values in
// command-line order. Given records which flags were on the command line
// (joptsimple's options.has), since AclCommand's checks depend on presence,
// not value: Record fills it after parsing.
type Options struct {
	BootstrapServer      string   // --bootstrap-server host:port[,…]
	CommandConfig        string   // --command-config: admin client properties file
	Authorizer           string   // --authorizer: the authorizer class (AclAuthorizer only)
	AuthorizerProperties []string // --authorizer-properties k=v (zookeeper.connect=…)
	ZkTLSConfigFile      string   // --zk-tls-config-file: refused (no ZooKeeper TLS here)

	Topics           []string // --topic
	Groups           []string // --group
	TransactionalIDs []string // --transactional-id
	DelegationTokens []string // --delegation-token
	UserPrincipals   []string // --user-principal (resource type USER)
	Cluster          bool     // --cluster
	Idempotent       bool     // --idempotent (with --producer)
	PatternType      string   // --resource-pattern-type; LITERAL when not given

	Add, Remove, List bool

	Operations      []string // --operation; All when not given
	AllowPrincipals []string // --allow-principal Type:name
	DenyPrincipals  []string // --deny-principal Type:name
	ListPrincipals  []string // --principal (with --list)
	AllowHosts      []string // --allow-host; * when principals are given
	DenyHosts       []string // --deny-host; * when principals are given

	Producer, Consumer bool // the --producer / --consumer shortcuts
	Force              bool // --force: no confirmation prompt on --remove

	Given map[string]bool // flag names present on the command line
}

// Flag names, as AclCommand declares them.
const (
	fBootstrap     = "bootstrap-server"
	fCommandConfig = "command-config"
	fAuthorizer    = "authorizer"
	fAuthzProps    = "authorizer-properties"
	fZkTLS         = "zk-tls-config-file"
	fTopic         = "topic"
	fCluster       = "cluster"
	fGroup         = "group"
	fTxnID         = "transactional-id"
	fIdempotent    = "idempotent"
	fToken         = "delegation-token"
	fPatternType   = "resource-pattern-type"
	fAdd           = "add"
	fRemove        = "remove"
	fList          = "list"
	fOperation     = "operation"
	fAllowPrinc    = "allow-principal"
	fDenyPrinc     = "deny-principal"
	fListPrinc     = "principal"
	fAllowHost     = "allow-host"
	fDenyHost      = "deny-host"
	fProducer      = "producer"
	fConsumer      = "consumer"
	fForce         = "force"
	fUserPrinc     = "user-principal"
)

// Bind declares kafka-acls.sh's flags on fs, writing into o.
func (o *Options) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&o.BootstrapServer, fBootstrap, "", "the Kafka server(s) to connect to, host1:port1,host2:port2; ACLs go through the broker's CreateAcls/DescribeAcls/DeleteAcls")
	fs.StringVar(&o.CommandConfig, fCommandConfig, "", "a property file with admin client configs (security.protocol, sasl.*, ssl.*…)")
	fs.StringVar(&o.Authorizer, fAuthorizer, "", "DEPRECATED: the authorizer class; kafka.security.authorizer.AclAuthorizer (the default without --bootstrap-server)")
	fs.StringArrayVar(&o.AuthorizerProperties, fAuthzProps, nil, "DEPRECATED: authorizer properties key=val, e.g. zookeeper.connect=localhost:2181[/chroot]; ACLs are written in ZooKeeper directly")
	fs.StringVar(&o.ZkTLSConfigFile, fZkTLS, "", "DEPRECATED: ZooKeeper client TLS properties (not supported)")
	fs.StringArrayVar(&o.Topics, fTopic, nil, "topic to which ACLs should be added or removed; '*' is every topic (repeatable)")
	fs.BoolVar(&o.Cluster, fCluster, false, "add/remove cluster ACLs")
	fs.StringArrayVar(&o.Groups, fGroup, nil, "consumer group to which ACLs should be added or removed; '*' is every group (repeatable)")
	fs.StringArrayVar(&o.TransactionalIDs, fTxnID, nil, "transactional id to which ACLs should be added or removed; '*' is every id (repeatable)")
	fs.BoolVar(&o.Idempotent, fIdempotent, false, "with --producer: also allow IdempotentWrite on the cluster")
	fs.StringArrayVar(&o.DelegationTokens, fToken, nil, "delegation token to which ACLs should be added or removed; '*' is every token (repeatable)")
	fs.StringVar(&o.PatternType, fPatternType, "", "resource pattern type: LITERAL (default) or PREFIXED; for --list/--remove also ANY or MATCH")
	fs.BoolVar(&o.Add, fAdd, false, "add ACLs")
	fs.BoolVar(&o.Remove, fRemove, false, "remove ACLs")
	fs.BoolVar(&o.List, fList, false, "list ACLs for the given resources (all ACLs without one)")
	fs.StringArrayVar(&o.Operations, fOperation, nil, "operation allowed or denied (repeatable; default All): "+strings.Join(operationNames(), ", "))
	fs.StringArrayVar(&o.AllowPrincipals, fAllowPrinc, nil, "principal in principalType:name form, e.g. User:alice; User:* is every user (repeatable)")
	fs.StringArrayVar(&o.DenyPrincipals, fDenyPrinc, nil, "principal to deny, principalType:name (repeatable); deny rules take precedence over allow rules")
	fs.StringArrayVar(&o.ListPrincipals, fListPrinc, nil, "with --list: only the ACLs of this principal (repeatable)")
	fs.StringArrayVar(&o.AllowHosts, fAllowHost, nil, "host from which --allow-principal principals have access (default * with --allow-principal)")
	fs.StringArrayVar(&o.DenyHosts, fDenyHost, nil, "host from which --deny-principal principals are denied (default * with --deny-principal)")
	fs.BoolVar(&o.Producer, fProducer, false, "producer role: Write, Describe and Create on the topics (Write, Describe on --transactional-id)")
	fs.BoolVar(&o.Consumer, fConsumer, false, "consumer role: Read, Describe on the topics and Read on the group")
	fs.BoolVar(&o.Force, fForce, false, "assume yes to all queries and do not prompt")
	fs.StringArrayVar(&o.UserPrincipals, fUserPrinc, nil, "a user principal as the resource (CreateTokens, DescribeTokens) (repeatable)")
}

// Record notes which flags of fs were given (after fs was parsed).
func (o *Options) Record(fs *pflag.FlagSet) {
	o.Given = map[string]bool{}
	fs.Visit(func(f *pflag.Flag) { o.Given[f.Name] = true })
}

// ParseArgs parses a kafka-acls.sh command line into Options (Bind, then
// Record); a flag error is a usage error.
func ParseArgs(args []string) (Options, error) {
	var o Options
	fs := pflag.NewFlagSet("kafka-acls", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	o.Bind(fs)
	if err := fs.Parse(args); err != nil {
		return o, clientutil.Usage("%v", err)
	}
	o.Record(fs)
	return o, nil
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func (o *Options) has(flag string) bool { return o.Given[flag] }

// usageHeader is what AclCommand prints when run without arguments.
const usageHeader = "This tool helps to manage acls on kafka."

// deprecationWarning is printed on stderr when ACLs go through the
// authorizer (no --bootstrap-server), as AclCommand does.
const deprecationWarning = "Warning: support for ACL configuration directly through the authorizer is deprecated " +
	"and will be removed in a future release. Please use --bootstrap-server instead to set ACLs through the admin client."

// patternType is --resource-pattern-type converted as AclCommand's
// PatternTypeConverter does (any case; UNKNOWN and other names refused),
// LITERAL when absent.
func (o *Options) patternType() (acl.PatternType, error) {
	if !o.has(fPatternType) {
		return acl.PatternLiteral, nil
	}
	v := o.PatternType
	p := acl.PatternUnknown
	for _, c := range []acl.PatternType{acl.PatternUnknown, acl.PatternAny, acl.PatternMatch, acl.PatternLiteral, acl.PatternPrefixed} {
		if strings.EqualFold(v, c.String()) {
			p = c
		}
	}
	if p != acl.PatternUnknown {
		return p, nil
	}
	reason := "Value [" + v + "] is not one of [ANY|MATCH|LITERAL|PREFIXED]"
	if strings.EqualFold(v, acl.PatternUnknown.String()) {
		reason = "Unknown resource-pattern-type: " + v
	}
	return 0, clientutil.Usage("Cannot parse argument '%s' of option %s: %s", v, fPatternType, reason)
}

// check is AclCommandOptions.checkArgs: the combinations Kafka refuses,
// in Kafka's order and words (each a usage error, exit status 1). Without
// --bootstrap-server it prints the authorizer path's deprecation warning
// on stderr first, as Kafka does.
func (o *Options) check(stderr io.Writer) error {
	if o.has(fBootstrap) && o.has(fAuthorizer) {
		return clientutil.Usage("Only one of --bootstrap-server or --authorizer must be specified")
	}
	if !o.has(fBootstrap) && !o.has(fAuthzProps) {
		return clientutil.Usage("Missing required argument \"[%s]\"", fAuthzProps)
	}
	if !o.has(fBootstrap) {
		fmt.Fprintln(stderr, deprecationWarning)
	}
	if o.has(fCommandConfig) && !o.has(fBootstrap) {
		return clientutil.Usage("The --command-config option can only be used with --bootstrap-server option")
	}
	if o.has(fAuthzProps) && o.has(fBootstrap) {
		return clientutil.Usage("The --authorizer-properties option can only be used with --authorizer option")
	}
	actions := 0
	for _, a := range []bool{o.has(fAdd), o.has(fRemove), o.has(fList)} {
		if a {
			actions++
		}
	}
	if actions != 1 {
		return clientutil.Usage("Command must include exactly one action: --list, --add, --remove. ")
	}
	if err := o.invalidWith(fList, fProducer, fConsumer, fAllowHost, fAllowPrinc, fDenyHost, fDenyPrinc); err != nil {
		return err
	}
	// --producer and --consumer imply their operations and allow only.
	if err := o.invalidWith(fProducer, fOperation, fDenyPrinc, fDenyHost); err != nil {
		return err
	}
	if err := o.invalidWith(fConsumer, fOperation, fDenyPrinc, fDenyHost); err != nil {
		return err
	}
	if o.has(fListPrinc) && !o.has(fList) {
		return clientutil.Usage("The --principal option is only available if --list is set")
	}
	if o.has(fProducer) && !o.has(fTopic) {
		return clientutil.Usage("With --producer you must specify a --topic")
	}
	if o.has(fIdempotent) && !o.has(fProducer) {
		return clientutil.Usage("The --idempotent option is only available if --producer is set")
	}
	if o.has(fConsumer) && (!o.has(fTopic) || !o.has(fGroup) || (!o.has(fProducer) && (o.has(fCluster) || o.has(fTxnID)))) {
		return clientutil.Usage("With --consumer you must specify a --topic and a --group and no --cluster or --transactional-id option should be specified.")
	}
	if o.has(fZkTLS) {
		return clientutil.Usage("--%s is not supported: the ZooKeeper client here has no TLS", fZkTLS)
	}
	return nil
}

// invalidWith is CommandLineUtils.checkInvalidArgs: with used given, none
// of others may be.
func (o *Options) invalidWith(used string, others ...string) error {
	if !o.has(used) {
		return nil
	}
	for _, x := range others {
		if o.has(x) {
			return clientutil.Usage("Option \"[%s]\" can't be used with option \"[%s]\"", used, x)
		}
	}
	return nil
}

// operationNames are the operation names --operation accepts, Pascal-case
// as Kafka prints them (AclEntry.ACL_OPERATIONS).
func operationNames() []string {
	var out []string
	for op := acl.OpAll; op <= acl.OpDescribeTokens; op++ {
		out = append(out, op.String())
	}
	return out
}
