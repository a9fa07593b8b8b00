package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"gregor/test/bench/benchproc"
)

// node is one broker: its directory (server.properties, broker.log,
// data/), ports and, while started, its process.
type node struct {
	id               int32
	dir              string
	port, adminPort  int
	gregor, propPath string
	// mu guards proc, which an interrupt's stop reads (cleanup.go).
	mu   sync.Mutex
	proc *benchproc.Process
}

// newNode writes dir/server.properties: base (a properties file) with
// listeners, log.dirs and admin.listener replaced by free ports and
// dir/data, then overlay (broker.id, zookeeper.connect, …) replacing or
// adding keys.
func newNode(gregor, base, dir string, id int32, overlay map[string]string) (*node, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	n := &node{id: id, dir: dir, gregor: gregor, propPath: filepath.Join(dir, "server.properties")}
	var err error
	if n.port, err = benchproc.FreePort(); err != nil {
		return nil, err
	}
	if n.adminPort, err = benchproc.FreePort(); err != nil {
		return nil, err
	}
	set := map[string]string{
		"listeners":      fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", n.port),
		"log.dirs":       filepath.Join(dir, "data"),
		"admin.listener": fmt.Sprintf("127.0.0.1:%d", n.adminPort),
	}
	for k, v := range overlay {
		set[k] = v
	}
	body, err := overlayProperties(base, set)
	if err != nil {
		return nil, err
	}
	return n, os.WriteFile(n.propPath, []byte(body), 0o644)
}

// overlayProperties is the properties file at path with each key of set
// given its value (the line replaced where the key is set, appended where
// it is not). Comments and blank lines are kept.
func overlayProperties(path string, set map[string]string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var sb strings.Builder
	done := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		t := strings.TrimSpace(line)
		if k, _, ok := strings.Cut(t, "="); ok && !strings.HasPrefix(t, "#") {
			k = strings.TrimSpace(k)
			if v, ok := set[k]; ok {
				if !done[k] {
					fmt.Fprintf(&sb, "%s=%s\n", k, v)
				}
				done[k] = true
				continue
			}
		}
		sb.WriteString(line + "\n")
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	for k, v := range set {
		if !done[k] {
			fmt.Fprintf(&sb, "%s=%s\n", k, v)
		}
	}
	return sb.String(), nil
}

func (n *node) addr() string { return fmt.Sprintf("127.0.0.1:%d", n.port) }

// start starts the broker process (it must not be running); it does not
// wait for it to serve.
func (n *node) start() error {
	cmd := exec.Command(n.gregor, "server", n.propPath)
	cmd.Dir = n.dir
	p, err := benchproc.Start(cmd, filepath.Join(n.dir, "broker.log"))
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.proc = p
	n.mu.Unlock()
	return nil
}

func (n *node) process() *benchproc.Process {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proc
}

func (n *node) running() bool { p := n.process(); return p != nil && !p.Exited() }

// stop stops a running broker: SIGTERM, SIGKILL after 60 s.
func (n *node) stop() {
	if p := n.process(); p != nil && !p.Exited() {
		p.Stop(60 * time.Second)
	}
}

// kill kills a running broker (SIGKILL): an interrupted run does not
// wait for controlled shutdowns.
func (n *node) kill() {
	if p := n.process(); p != nil && !p.Exited() {
		p.Kill()
	}
}

// logTail is the last lines of the broker's log, for a failure message.
func (n *node) logTail(lines int) string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "broker.log"))
	ls := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return strings.Join(ls, "\n")
}

// limits is the broker's open descriptors, its open-file limit and RSS,
// printed as one line (errors printed in place).
func (n *node) limits() (fds int, rss int64, desc string) {
	pid := n.proc.Pid()
	fds, err1 := benchproc.OpenFDs(pid)
	lim, err2 := benchproc.NoFileLimit(pid)
	rss, err3 := benchproc.RSSBytes(pid)
	if err := firstErr(err1, err2, err3); err != nil {
		return fds, rss, fmt.Sprintf("(/proc: %v)", err)
	}
	return fds, rss, fmt.Sprintf("%d open fds (limit %s), RSS %.1f MiB", fds, lim, float64(rss)/(1<<20))
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// profile fetches a CPU profile of secs seconds from the broker's admin
// listener (/debug/pprof/profile) into path, in the background; the
// returned channel gets the outcome. It runs its full secs even when the
// step it profiles ends sooner (a cut profile is no profile), bounded by
// secs + 30 s.
func (n *node) profile(secs int, path string) <-chan error {
	out := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs+30)*time.Second)
		defer cancel()
		url := fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", n.adminPort, secs)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			out <- err
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			out <- fmt.Errorf("%s: %s", url, resp.Status)
			return
		}
		f, err := os.Create(path)
		if err != nil {
			out <- err
			return
		}
		_, err = io.Copy(f, resp.Body)
		out <- firstErr(err, f.Close())
	}()
	return out
}
