package acls

import (
	"context"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/cmd/internal/clientutil"
	"gregor/wire/security/acl"
)

// adminBackend sends CreateAcls, DescribeAcls and DeleteAcls to the
// cluster, as AclCommand's AdminClientService does through Kafka's Admin.
// The requests are kmsg's; the model's enum values are the wire codes.
type adminBackend struct{ cl *kgo.Client }

// openAdmin builds the client the other admin tools build from
// --bootstrap-server and the --command-config properties.
func openAdmin(bootstrap, commandConfig string) (backend, error) {
	var props map[string]string
	if commandConfig != "" {
		var err error
		if props, err = clientutil.LoadPropsFile(commandConfig); err != nil {
			return nil, err
		}
	}
	cl, err := clientutil.AdminKgoClient(bootstrap, props)
	if err != nil {
		return nil, err
	}
	return &adminBackend{cl: cl}, nil
}

func (a *adminBackend) close() { a.cl.Close() }

func (a *adminBackend) create(ctx context.Context, p acl.ResourcePattern, es []acl.Entry) ([]error, error) {
	req := kmsg.NewPtrCreateACLsRequest()
	for _, e := range es {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType = kmsg.ACLResourceType(p.Type)
		c.ResourceName = p.Name
		c.ResourcePatternType = kmsg.ACLResourcePatternType(p.Pattern)
		c.Principal = e.Principal
		c.Host = e.Host
		c.Operation = kmsg.ACLOperation(e.Operation)
		c.PermissionType = kmsg.ACLPermissionType(e.Permission)
		req.Creations = append(req.Creations, c)
	}
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, err
	}
	if len(resp.Results) != len(req.Creations) {
		return nil, fmt.Errorf("CreateAcls: %d results to %d creations", len(resp.Results), len(req.Creations))
	}
	errs := make([]error, len(resp.Results))
	for i, r := range resp.Results {
		errs[i] = brokerError(r.ErrorCode, r.ErrorMessage)
	}
	return errs, nil
}

func (a *adminBackend) describe(ctx context.Context, filters []acl.BindingFilter) ([]acl.Binding, error) {
	var out []acl.Binding
	for _, f := range filters {
		req := kmsg.NewPtrDescribeACLsRequest()
		req.ResourceType = kmsg.ACLResourceType(f.Pattern.Type)
		req.ResourceName = f.Pattern.Name
		req.ResourcePatternType = kmsg.ACLResourcePatternType(f.Pattern.Pattern)
		req.Principal = f.Entry.Principal
		req.Host = f.Entry.Host
		req.Operation = kmsg.ACLOperation(f.Entry.Operation)
		req.PermissionType = kmsg.ACLPermissionType(f.Entry.Permission)
		resp, err := req.RequestWith(ctx, a.cl)
		if err != nil {
			return nil, err
		}
		if err := brokerError(resp.ErrorCode, resp.ErrorMessage); err != nil {
			return nil, err
		}
		for _, r := range resp.Resources {
			p := acl.ResourcePattern{Type: acl.ResourceType(r.ResourceType), Name: r.ResourceName, Pattern: acl.PatternType(r.ResourcePatternType)}
			for _, e := range r.ACLs {
				out = append(out, acl.Binding{Pattern: p, Entry: acl.Entry{
					Principal: e.Principal, Host: e.Host,
					Operation: acl.Operation(e.Operation), Permission: acl.PermissionType(e.PermissionType),
				}})
			}
		}
	}
	return out, nil
}

func (a *adminBackend) delete(ctx context.Context, filters []acl.BindingFilter) ([]error, error) {
	req := kmsg.NewPtrDeleteACLsRequest()
	for _, f := range filters {
		d := kmsg.NewDeleteACLsRequestFilter()
		d.ResourceType = kmsg.ACLResourceType(f.Pattern.Type)
		d.ResourceName = f.Pattern.Name
		d.ResourcePatternType = kmsg.ACLResourcePatternType(f.Pattern.Pattern)
		d.Principal = f.Entry.Principal
		d.Host = f.Entry.Host
		d.Operation = kmsg.ACLOperation(f.Entry.Operation)
		d.PermissionType = kmsg.ACLPermissionType(f.Entry.Permission)
		req.Filters = append(req.Filters, d)
	}
	resp, err := req.RequestWith(ctx, a.cl)
	if err != nil {
		return nil, err
	}
	if len(resp.Results) != len(req.Filters) {
		return nil, fmt.Errorf("DeleteAcls: %d results to %d filters", len(resp.Results), len(req.Filters))
	}
	var errs []error
	for _, r := range resp.Results {
		errs = append(errs, brokerError(r.ErrorCode, r.ErrorMessage))
		for _, m := range r.MatchingACLs {
			errs = append(errs, brokerError(m.ErrorCode, m.ErrorMessage))
		}
	}
	return errs, nil
}

// javaExceptions are the Kafka exception classes of the error codes the
// ACL requests answer with; others are named after the code.
var javaExceptions = map[int16]string{
	kerr.SecurityDisabled.Code:           "SecurityDisabledException",
	kerr.ClusterAuthorizationFailed.Code: "ClusterAuthorizationException",
	kerr.InvalidRequest.Code:             "InvalidRequestException",
	kerr.UnsupportedVersion.Code:         "UnsupportedVersionException",
	kerr.UnknownServerError.Code:         "UnknownServerException",
	kerr.RequestTimedOut.Code:            "TimeoutException",
	kerr.NotController.Code:              "NotControllerException",
}

// brokerError is a response's error code and message as Kafka's Admin
// surfaces it (ExecutionException.getMessage is the cause's toString):
// "org.apache.kafka.common.errors.SecurityDisabledException: No Authorizer
// is configured on the broker". The message is the broker's, or the
// code's description when it sent none. nil for code 0.
func brokerError(code int16, msg *string) error {
	err := kerr.ErrorForCode(code)
	if err == nil {
		return nil
	}
	text := ""
	if msg != nil {
		text = *msg
	}
	name := javaExceptions[code]
	if ke, ok := err.(*kerr.Error); ok {
		if text == "" {
			text = ke.Description
		}
		if name == "" {
			name = pascal(ke.Message) + "Exception"
		}
	}
	if name == "" {
		name = "UnknownServerException"
	}
	return clientutil.WithMessage(err, "org.apache.kafka.common.errors."+name+": "+text)
}

// pascal turns an error code name (TOPIC_AUTHORIZATION_FAILED) into
// Pascal case (TopicAuthorizationFailed).
func pascal(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(strings.ToLower(s), "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}
