package acls

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"gregor/cmd/internal/clientutil"
	"gregor/wire/security/acl"
)

// Timeout bounds one command, connecting included.
var Timeout = 60 * time.Second

// backend is where ACLs are kept: a broker (admin.go) or ZooKeeper
// through the AclAuthorizer's storage (zk.go).
type backend interface {
	// create stores entries on pattern; one error per entry (nil = stored).
	create(ctx context.Context, p acl.ResourcePattern, es []acl.Entry) ([]error, error)
	// describe returns the bindings the filters select, without duplicates.
	describe(ctx context.Context, filters []acl.BindingFilter) ([]acl.Binding, error)
	// delete removes the bindings the filters select; the errors of
	// single bindings or filters come back in the slice.
	delete(ctx context.Context, filters []acl.BindingFilter) ([]error, error)
	close()
}

// Main runs kafka-acls.sh and returns its exit status. Usage errors are
// printed on stderr (one line, Kafka's words) with status 1; a failed
// command prints AclCommand's "Error while executing ACL command: …" on
// stdout, as Kafka does, with status 1. A --remove without --force asks
// for each resource filter on stdout and reads the answer from stdin
// (only "y" proceeds; end of input is an error).
func Main(ctx context.Context, o Options, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(ctx, o, nil, stdin, stdout, stderr)
}

// run is Main over be, or over the backend the options name when be is nil.
func run(ctx context.Context, o Options, be backend, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(o.Given) == 0 {
		fmt.Fprintln(stderr, usageHeader)
		return 1
	}
	if _, err := o.patternType(); err != nil {
		return clientutil.Report(stderr, "", err)
	}
	if err := o.check(stderr); err != nil {
		return clientutil.Report(stderr, "", err)
	}
	r := &runner{o: o, stdin: bufio.NewReader(stdin), stdout: stdout, be: be}
	var err error
	switch {
	case o.Add:
		err = r.add(ctx)
	case o.Remove:
		err = r.remove(ctx)
	default:
		err = r.list(ctx)
	}
	var ee *clientutil.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee): // usage, found while building the ACLs
		return clientutil.Report(stderr, "", err)
	case errors.Is(err, errReported):
		return 1
	}
	return clientutil.Report(stdout, "Error while executing ACL command: ", err)
}

// errReported: the failure was already printed (per-ACL error lines of
// the authorizer path); exit 1 without another line.
var errReported = errors.New("errors reported")

type runner struct {
	o      Options
	stdin  *bufio.Reader
	stdout io.Writer
	be     backend
}

// open connects the backend on first use.
func (r *runner) open() (backend, error) {
	if r.be != nil {
		return r.be, nil
	}
	var err error
	if r.o.has(fBootstrap) {
		r.be, err = openAdmin(r.o.BootstrapServer, r.o.CommandConfig)
	} else {
		r.be, err = openAuthorizer(r.o)
	}
	return r.be, err
}

func (r *runner) closeBackend() {
	if r.be != nil {
		r.be.close()
	}
}

func (r *runner) add(ctx context.Context) error {
	l, err := r.o.addACLs()
	if err != nil {
		return err
	}
	be, err := r.open()
	if err != nil {
		return err
	}
	defer r.closeBackend()
	failed := false
	for _, res := range l {
		p := pattern(res.filter)
		fmt.Fprint(r.stdout, addingText(p, res.entries))
		cctx, cancel := context.WithTimeout(ctx, Timeout)
		errs, err := be.create(cctx, p, res.entries)
		cancel()
		if err := r.check(errs, err, "adding", &failed); err != nil {
			return err
		}
	}
	if failed {
		return errReported
	}
	return nil
}

// check handles one create or delete's results. Through a broker the
// first error fails the command (Kafka's Admin futures' all().get());
// through the authorizer each failed ACL prints AclCommand's "Error while
// adding ACLs: …" / "Error while removing ACLs: …" line and the command
// goes on (exiting 1 at the end, where Kafka exits 0).
func (r *runner) check(errs []error, err error, doing string, failed *bool) error {
	if err != nil {
		return err
	}
	if r.o.has(fBootstrap) {
		return firstError(errs)
	}
	for _, e := range errs {
		if e != nil {
			fmt.Fprintf(r.stdout, "Error while %s ACLs: %v\n", doing, e)
			*failed = true
		}
	}
	return nil
}

func (r *runner) remove(ctx context.Context) error {
	pt, _ := r.o.patternType()
	l, err := r.o.filterACLs(pt)
	if err != nil {
		return err
	}
	be, err := r.open()
	if err != nil {
		return err
	}
	defer r.closeBackend()
	failed := false
	for _, res := range l {
		ok, err := r.confirm(removeQuestion(res.filter, res.entries))
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		var filters []acl.BindingFilter
		if len(res.entries) == 0 {
			filters = []acl.BindingFilter{{Pattern: res.filter, Entry: acl.AnyFilter.Entry}}
		}
		for _, e := range res.entries {
			filters = append(filters, acl.BindingFilter{Pattern: res.filter, Entry: acl.Binding{Entry: e}.Filter().Entry})
		}
		cctx, cancel := context.WithTimeout(ctx, Timeout)
		errs, err := be.delete(cctx, filters)
		cancel()
		if err := r.check(errs, err, "removing", &failed); err != nil {
			return err
		}
	}
	if failed {
		return errReported
	}
	return nil
}

// confirm is AclCommand.confirmAction: yes with --force, else the
// question on stdout and "y" (any case) on stdin.
func (r *runner) confirm(question string) (bool, error) {
	if r.o.Force {
		return true, nil
	}
	fmt.Fprint(r.stdout, question)
	line, err := r.stdin.ReadString('\n')
	if err != nil && (!errors.Is(err, io.EOF) || line == "") {
		if errors.Is(err, io.EOF) {
			return false, fmt.Errorf("no answer to the confirmation on standard input (use --force to remove without asking)")
		}
		return false, err
	}
	return strings.EqualFold(strings.TrimRight(line, "\r\n"), "y"), nil
}

func (r *runner) list(ctx context.Context) error {
	pt, _ := r.o.patternType()
	pfs, err := r.o.resourceFilters(pt, false)
	if err != nil {
		return err
	}
	principals, err := parsePrincipals(r.o.ListPrincipals)
	if err != nil {
		return err
	}
	filters := []acl.BindingFilter{acl.AnyFilter}
	if len(pfs) > 0 {
		filters = filters[:0]
		for _, f := range pfs {
			filters = append(filters, acl.BindingFilter{Pattern: f, Entry: acl.AnyFilter.Entry})
		}
	}
	be, err := r.open()
	if err != nil {
		return err
	}
	defer r.closeBackend()
	cctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	bindings, err := be.describe(cctx, filters)
	if err != nil {
		return err
	}
	if len(principals) == 0 {
		printCurrent(r.stdout, bindings, func(acl.Entry) bool { return true })
		return nil
	}
	for _, p := range principals {
		fmt.Fprint(r.stdout, principalHeader(p))
		printCurrent(r.stdout, bindings, func(e acl.Entry) bool { return e.Principal == p })
	}
	return nil
}

// printCurrent prints the "Current ACLs for resource" block of every
// pattern with entries that keep selects; patterns in the storage order
// (type, pattern type, name), entries sorted.
func printCurrent(w io.Writer, bindings []acl.Binding, keep func(acl.Entry) bool) {
	for _, g := range group(bindings, keep) {
		fmt.Fprint(w, currentText(g.pattern, g.entries))
	}
}

type patternEntries struct {
	pattern acl.ResourcePattern
	entries []acl.Entry
}

// group collects bindings by pattern (duplicates dropped), patterns by
// resource type, pattern type and name, entries by principal, host,
// operation and permission, so the output does not depend on the order
// the backend answered in (Kafka's own order is a hash set's).
func group(bindings []acl.Binding, keep func(acl.Entry) bool) []patternEntries {
	var out []patternEntries
	idx := map[acl.ResourcePattern]int{}
	for _, b := range bindings {
		if !keep(b.Entry) {
			continue
		}
		i, ok := idx[b.Pattern]
		if !ok {
			i = len(out)
			idx[b.Pattern] = i
			out = append(out, patternEntries{pattern: b.Pattern})
		}
		out[i].entries = addEntries(out[i].entries, []acl.Entry{b.Entry})
	}
	slices.SortFunc(out, func(a, b patternEntries) int {
		x, y := a.pattern, b.pattern
		if x.Type != y.Type {
			return int(x.Type) - int(y.Type)
		}
		if x.Pattern != y.Pattern {
			return int(x.Pattern) - int(y.Pattern)
		}
		return strings.Compare(x.Name, y.Name)
	})
	for _, g := range out {
		slices.SortFunc(g.entries, compareEntries)
	}
	return out
}

func compareEntries(a, b acl.Entry) int {
	if c := strings.Compare(a.Principal, b.Principal); c != 0 {
		return c
	}
	if c := strings.Compare(a.Host, b.Host); c != 0 {
		return c
	}
	if a.Operation != b.Operation {
		return int(a.Operation) - int(b.Operation)
	}
	return int(a.Permission) - int(b.Permission)
}

func firstError(errs []error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
