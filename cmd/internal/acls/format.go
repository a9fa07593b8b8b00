package acls

import (
	"fmt"
	"strings"

	"gregor/wire/security/acl"
)

// entryText is Kafka's AccessControlEntry.toString, the form AclCommand
// prints: "(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)".
func entryText(e acl.Entry) string {
	return fmt.Sprintf("(principal=%s, host=%s, operation=%s, permissionType=%s)",
		e.Principal, e.Host, e.Operation.EnumName(), e.Permission.EnumName())
}

// filterText is Kafka's ResourcePatternFilter.toString (a nil name is <any>).
func filterText(f acl.PatternFilter) string {
	name := "<any>"
	if f.Name != nil {
		name = *f.Name
	}
	return acl.ResourcePattern{Type: f.Type, Name: name, Pattern: f.Pattern}.String()
}

// entryLines is AclCommand's `$Newline ${acls.map("\t" + _).mkString(Newline)} $Newline`:
// a newline, a space, the tab-indented entries one per line, a space and a
// newline.
func entryLines(es []acl.Entry) string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = "\t" + entryText(e)
	}
	return "\n " + strings.Join(lines, "\n") + " \n"
}

// addingText is what --add prints before creating a resource's ACLs.
func addingText(p acl.ResourcePattern, es []acl.Entry) string {
	return fmt.Sprintf("Adding ACLs for resource `%s`: %s\n", p, entryLines(es))
}

// currentText is what --list prints for each resource.
func currentText(p acl.ResourcePattern, es []acl.Entry) string {
	return fmt.Sprintf("Current ACLs for resource `%s`: %s\n", p, entryLines(es))
}

// principalHeader precedes a --list --principal section.
func principalHeader(principal string) string {
	return fmt.Sprintf("ACLs for principal `%s`\n", principal)
}

// removeQuestion is --remove's confirmation question for a resource
// filter: all its ACLs (no entries) or the listed ones.
func removeQuestion(f acl.PatternFilter, es []acl.Entry) string {
	if len(es) == 0 {
		return fmt.Sprintf("Are you sure you want to delete all ACLs for resource filter `%s`? (y/n)\n", filterText(f))
	}
	return fmt.Sprintf("Are you sure you want to remove ACLs: %s from resource filter `%s`? (y/n)\n", entryLines(es), filterText(f))
}
