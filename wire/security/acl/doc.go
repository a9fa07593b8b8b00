// Package acl is Kafka's access-control model and its ZooKeeper storage, as
// Kafka's AclAuthorizer (kafka.security.authorizer.AclAuthorizer, ZooKeeper
// mode, Kafka 2.8–3.9) defines them, so that Kafka's own tools and Gregor
// read and write each other's ACLs.
//
// The model (model.go, filter.go) mirrors org.apache.kafka.common.acl and
// org.apache.kafka.common.resource: ResourceType, PatternType, Operation
// and PermissionType carry Kafka's wire codes (the int8 values of the
// CreateAcls/DescribeAcls/DeleteAcls fields); a Binding is a
// ResourcePattern plus an Entry (principal, host, operation, permission);
// a BindingFilter selects bindings as AclBindingFilter does (nil names and
// principals/hosts match anything, ANY and MATCH pattern types).
//
// Storage (store.go, codec.go) is a set of functions over a
// metastore.Store, the same for the embedded store of the single node and
// for ZooKeeper (replication/zkstore):
//
//	/kafka-acl/<ResourceType>/<name>                     literal patterns
//	/kafka-acl-extended/prefixed/<ResourceType>/<name>   prefixed patterns
//	  data {"version":1,"acls":[{"principal":"User:alice","permissionType":"Allow","operation":"Read","host":"*"}]}
//	/kafka-acl-changes/acl_changes_<seq>                 data "TOPIC:name" (literal changes)
//	/kafka-acl-extended-changes/acl_changes_<seq>        data {"version":1,"resourceType":"TOPIC","name":"p","patternType":"PREFIXED"}
//
// Add and Remove update a resource's node with a conditional (versioned)
// write, retried on a conflict, and then write a change notification;
// List and LoadAll read. The authorizer (authorizer.go) is a pure decision
// over an immutable Snapshot that a Watcher (watcher.go) keeps current
// from the notification znodes.
package acl
