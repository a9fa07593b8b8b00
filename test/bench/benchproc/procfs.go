package benchproc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// CPUSeconds is the process's utime+stime from /proc/<pid>/stat (fields 14
// and 15, in USER_HZ = 100 ticks per second on Linux).
func CPUSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	// f[0] is field 3 (state); utime is field 14 → f[11], stime f[12].
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parse %s", s)
	}
	return (ut + st) / 100, nil
}

// RSSBytes is the process's resident set size in bytes (VmRSS in
// /proc/<pid>/status, which the kernel gives in kB).
func RSSBytes(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "VmRSS:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmRSS %q: %w", sc.Text(), err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
}

// OpenFDs is the number of descriptors the process holds (entries of
// /proc/<pid>/fd).
func OpenFDs(pid int) (int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, err
	}
	return len(ents), nil
}

// NoFileLimit is the process's soft "Max open files" from
// /proc/<pid>/limits: what the process itself runs with (a Go child
// raises its own soft limit to the hard one at start-up).
func NoFileLimit(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", pid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			if f := strings.Fields(rest); len(f) >= 1 {
				return f[0], nil
			}
		}
	}
	return "", fmt.Errorf("/proc/%d/limits has no Max open files", pid)
}

// RaiseNoFile sets this process's soft RLIMIT_NOFILE to its hard limit,
// which every child started afterwards inherits (an explicit Setrlimit
// also stops os/exec restoring the soft limit Go found at start-up), and
// returns the limit now in force.
func RaiseNoFile() (uint64, error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, err
	}
	l.Cur = l.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, err
	}
	return l.Cur, nil
}
