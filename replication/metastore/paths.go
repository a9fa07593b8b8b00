package metastore

import (
	"errors"
	"strings"
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
func DeleteRecursive(s Store, p string) error {
	kids, err := s.Children(p)
	if errors.Is(err, ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := DeleteRecursive(s, Join(p, k)); err != nil {
			return err
		}
	}
	if err := s.Delete(p, AnyVersion); err != nil && !errors.Is(err, ErrNoNode) {
		return err
	}
	return nil
}
