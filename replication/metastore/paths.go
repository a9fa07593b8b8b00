package metastore

import (
	"errors"
	"strings"
	"sync"
)

// ValidatePath checks a znode path: absolute, no empty, "." or ".."
// components, no trailing slash (except the root "/"), no NUL.
func ValidatePath(p string) error {
	if p == "/" {
		return nil
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.ContainsRune(p, 0) {
		return pathError(p)
	}
	for _, c := range strings.Split(p[1:], "/") {
		if c == "" || c == "." || c == ".." {
			return pathError(p)
		}
	}
	return nil
}

func pathError(p string) error { return &PathError{Path: p} }

// PathError reports an invalid path; errors.Is(err, ErrInvalidPath) holds.
type PathError struct{ Path string }

func (e *PathError) Error() string { return "metastore: invalid path " + quote(e.Path) }

// Is makes errors.Is(err, ErrInvalidPath) true.
func (e *PathError) Is(target error) bool { return target == ErrInvalidPath }

func quote(s string) string { return "\"" + s + "\"" }

// Parent returns the parent of a valid non-root path ("/a/b" → "/a", "/a" → "/").
func Parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// Base returns the last component of a path ("/a/b" → "b").
func Base(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// Join appends child names to a path.
func Join(p string, names ...string) string {
	for _, n := range names {
		if p == "/" {
			p = "/" + n
		} else {
			p = p + "/" + n
		}
	}
	return p
}

// EnsurePath creates p and any missing ancestors as empty persistent nodes
// (mkdir -p); existing nodes are left untouched.
func EnsurePath(s Store, p string) error {
	if err := ValidatePath(p); err != nil {
		return err
	}
	if p == "/" {
		return nil
	}
	cur := ""
	for _, c := range strings.Split(p[1:], "/") {
		cur += "/" + c
		if err := s.Create(cur, nil, false); err != nil && !errors.Is(err, ErrNodeExists) {
			return err
		}
	}
	return nil
}

// CreateAll creates p with data, first creating missing ancestors as empty
// persistent nodes. It returns ErrNodeExists when p itself exists.
func CreateAll(s Store, p string, data []byte, ephemeral bool) error {
	err := s.Create(p, data, ephemeral)
	if !errors.Is(err, ErrNoNode) {
		return err
	}
	if err := EnsurePath(s, Parent(p)); err != nil {
		return err
	}
	return s.Create(p, data, ephemeral)
}

// DeleteRecursive deletes p and everything below it, ignoring versions
// (ZooKeeper's deleteall). A missing p is not an error.
//
// The subtree is listed first, a level at a time with each level's
// Children calls issued together (the ZooKeeper client pipelines them),
// then deleted deepest first in Multi transactions of at most
// deleteChunk nodes: a topic of 10,000 partitions is a few round trips of
// deletes instead of 20,000. The whole is not atomic (neither is
// ZooKeeper's deleteall): a chunk refused because the tree changed under
// it (a node gone, or a new child) is redone node by node.
func DeleteRecursive(s Store, p string) error {
	levels := [][]string{{p}}
	for {
		cur := levels[len(levels)-1]
		kids := make([][]string, len(cur))
		errs := make([]error, len(cur))
		var wg sync.WaitGroup
		for i, n := range cur {
			wg.Add(1)
			go func() {
				defer wg.Done()
				kids[i], errs[i] = s.Children(n)
			}()
		}
		wg.Wait()
		var next []string
		for i, n := range cur {
			if errors.Is(errs[i], ErrNoNode) {
				continue
			}
			if errs[i] != nil {
				return errs[i]
			}
			for _, k := range kids[i] {
				next = append(next, Join(n, k))
			}
		}
		if len(next) == 0 {
			break
		}
		levels = append(levels, next)
	}
	var order []string // deepest first
	for l := len(levels) - 1; l >= 0; l-- {
		order = append(order, levels[l]...)
	}
	for len(order) > 0 {
		chunk := order[:min(deleteChunk, len(order))]
		order = order[len(chunk):]
		ops := make([]Op, len(chunk))
		for i, n := range chunk {
			ops[i] = &DeleteOp{Path: n, Version: AnyVersion}
		}
		if _, err := s.Multi(ops...); err == nil {
			continue
		}
		for _, n := range chunk {
			if err := deleteOne(s, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteChunk bounds the deletes of one DeleteRecursive transaction (a
// ZooKeeper request must stay under jute.maxbuffer, 1 MiB by default).
const deleteChunk = 1000

// deleteOne deletes n, first whatever was created under it meanwhile.
func deleteOne(s Store, n string) error {
	err := s.Delete(n, AnyVersion)
	switch {
	case err == nil, errors.Is(err, ErrNoNode):
		return nil
	case errors.Is(err, ErrNotEmpty):
		kids, cerr := s.Children(n)
		if cerr != nil && !errors.Is(cerr, ErrNoNode) {
			return cerr
		}
		for _, k := range kids {
			if err := deleteOne(s, Join(n, k)); err != nil {
				return err
			}
		}
		return deleteOne(s, n)
	default:
		return err
	}
}
