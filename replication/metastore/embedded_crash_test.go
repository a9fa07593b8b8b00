package metastore

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The crash test: a child process (this test binary again, running
// TestEmbeddedCrashWriter) writes the store from several goroutines and
// prints "ack <goroutine> <op>" after each write returns; the parent
// SIGKILLs it at a random point, reopens the store and checks that every
// acknowledged op is there, that each goroutine's nodes are exactly those
// of its first A or A+1 ops (A acknowledged; the op in flight may or may
// not have landed, but never in part: Multi is atomic), that no ephemeral
// survived, and that what earlier rounds left is untouched.

const (
	crashDirEnv   = "GREGOR_METASTORE_CRASH_DIR"
	crashRoundEnv = "GREGOR_METASTORE_CRASH_ROUND"
	crashWriters  = 4
	crashMaxOps   = 3000 // per goroutine: the child stops by itself
)

// crashModel is the persistent state under /crash/r<round> that
// goroutine g leaves after its first k ops: path → "data@version".
func crashModel(round, g, k int) map[string]string {
	base := fmt.Sprintf("/crash/r%d/g%d", round, g)
	m := map[string]string{base: "@0"}
	counter, counterV := "", int32(0)
	for i := 0; i < k; i++ {
		switch i % 5 {
		case 0:
			m[fmt.Sprintf("%s/n%d", base, i)] = fmt.Sprintf("%d@0", i)
		case 1:
			m[fmt.Sprintf("%s/m%da", base, i)] = "@0"
			m[fmt.Sprintf("%s/m%db", base, i)] = "@0"
			counter, counterV = strconv.Itoa(i), counterV+1
		case 2:
			counter, counterV = strconv.Itoa(i), counterV+1
		case 3:
			delete(m, fmt.Sprintf("%s/n%d", base, i-3))
		case 4:
			m[fmt.Sprintf("%s/s_%010d", base, i/5)] = fmt.Sprintf("s%d@0", i)
		}
	}
	m[base+"/counter"] = fmt.Sprintf("%s@%d", counter, counterV)
	return m
}

// crashOp performs op i of goroutine g (the ops crashModel describes);
// op 0 mod 5 also creates an ephemeral node, which must never survive.
func crashOp(s *Embedded, round, g, i int) error {
	base := fmt.Sprintf("/crash/r%d/g%d", round, g)
	counter := base + "/counter"
	switch i % 5 {
	case 0:
		if err := s.Create(fmt.Sprintf("%s/n%d", base, i), []byte(strconv.Itoa(i)), false); err != nil {
			return err
		}
		return s.Create(fmt.Sprintf("%s/e%d", base, i), nil, true)
	case 1:
		_, v, err := s.Get(counter)
		if err != nil {
			return err
		}
		_, err = s.Multi(
			&CreateOp{Path: fmt.Sprintf("%s/m%da", base, i)},
			&CreateOp{Path: fmt.Sprintf("%s/m%db", base, i)},
			&SetOp{Path: counter, Data: []byte(strconv.Itoa(i)), Version: v})
		return err
	case 2:
		_, v, err := s.Get(counter)
		if err != nil {
			return err
		}
		_, err = s.Set(counter, []byte(strconv.Itoa(i)), v)
		return err
	case 3:
		return s.Delete(fmt.Sprintf("%s/n%d", base, i-3), 0)
	default:
		p, err := s.CreateSequential(base+"/s_", []byte(fmt.Sprintf("s%d", i)), false)
		if err == nil && p != fmt.Sprintf("%s/s_%010d", base, i/5) {
			return fmt.Errorf("sequential node %s, want number %d", p, i/5)
		}
		return err
	}
}

// TestEmbeddedCrashWriter is the child of TestEmbeddedCrash; it does
// nothing unless started by it.
func TestEmbeddedCrashWriter(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("the child process of TestEmbeddedCrash")
	}
	round, _ := strconv.Atoi(os.Getenv(crashRoundEnv))
	s, err := OpenEmbeddedDir(dir)
	if err != nil {
		fmt.Printf("fail open: %v\n", err)
		os.Exit(2)
	}
	for g := range crashWriters {
		if err := CreateAll(s, fmt.Sprintf("/crash/r%d/g%d/counter", round, g), nil, false); err != nil {
			fmt.Printf("fail setup: %v\n", err)
			os.Exit(2)
		}
	}
	fmt.Println("ready")
	var wg sync.WaitGroup
	for g := range crashWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range crashMaxOps {
				if err := crashOp(s, round, g, i); err != nil {
					fmt.Printf("fail %d %d: %v\n", g, i, err)
					os.Exit(2)
				}
				fmt.Printf("ack %d %d\n", g, i) // one write(2): lines never interleave
			}
		}()
	}
	wg.Wait()
	s.Close()
	os.Exit(0)
}

// crashRound runs one child, kills it at a random point and returns, per
// goroutine, how many ops it acknowledged (nil if it never got ready).
func crashRound(t *testing.T, dir string, round int, rng *rand.Rand) []int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestEmbeddedCrashWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashRoundEnv+"="+strconv.Itoa(round))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())

	// Kill after a random number of acks, or (one round in four) a random
	// time after the start, which may fall inside the open or the setup.
	killAfterAcks := rng.Intn(600)
	if round%4 == 3 {
		killAfterAcks = -1
		d := time.Duration(rng.Intn(300)) * time.Millisecond
		time.AfterFunc(d, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
	}
	acked := make([]int, crashWriters)
	ready, killed, acks := false, false, 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "ready":
			ready = true
		case strings.HasPrefix(line, "ack "):
			var g, i int
			if _, err := fmt.Sscanf(line, "ack %d %d", &g, &i); err != nil || g >= crashWriters || i != acked[g] {
				t.Fatalf("bad ack line %q (acked %v)", line, acked)
			}
			acked[g] = i + 1
			acks++
		case strings.HasPrefix(line, "fail"):
			t.Fatalf("writer: %s\n%s", line, stderr.String())
		}
		if !killed && killAfterAcks >= 0 && ready && acks >= killAfterAcks {
			killed = true
			must(t, cmd.Process.Signal(syscall.SIGKILL))
		}
	}
	err = cmd.Wait() // after the pipe's EOF: every ack printed was read
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("writer ended without being killed: %v\n%s", err, stderr.String())
	}
	if !ready {
		return nil
	}
	return acked
}

// readTree lists every node under base with "data@version".
func readTree(t *testing.T, s *Embedded, base string) map[string]string {
	t.Helper()
	m := map[string]string{}
	var walk func(p string)
	walk = func(p string) {
		d, v, err := s.Get(p)
		must(t, err)
		m[p] = fmt.Sprintf("%s@%d", d, v)
		kids, err := s.Children(p)
		must(t, err)
		for _, k := range kids {
			walk(Join(p, k))
		}
	}
	walk(base)
	return m
}

func equalTrees(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestEmbeddedCrash(t *testing.T) {
	rounds := 12
	if testing.Short() {
		rounds = 4
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	dir := t.TempDir()
	// What each finished round left, checked again after every later crash.
	done := map[int]map[string]string{}
	for round := range rounds {
		acked := crashRound(t, dir, round, rng)
		s, err := OpenEmbeddedDir(dir)
		if err != nil {
			t.Fatalf("round %d: reopen after kill -9: %v", round, err)
		}
		for r, want := range done {
			if got := readTree(t, s, fmt.Sprintf("/crash/r%d", r)); !equalTrees(got, want) {
				t.Fatalf("round %d changed what round %d left", round, r)
			}
		}
		if acked == nil {
			t.Logf("round %d: killed before the writer was ready", round)
			s.Close()
			continue
		}
		got := readTree(t, s, fmt.Sprintf("/crash/r%d", round))
		for g := range crashWriters {
			sub := map[string]string{}
			base := fmt.Sprintf("/crash/r%d/g%d", round, g)
			for p, v := range got {
				if p == base || strings.HasPrefix(p, base+"/") {
					sub[p] = v
				}
			}
			if !equalTrees(sub, crashModel(round, g, acked[g])) && !equalTrees(sub, crashModel(round, g, acked[g]+1)) {
				t.Fatalf("round %d goroutine %d: %d ops acknowledged, store holds\n%v\nwant\n%v\n(or one op more)",
					round, g, acked[g], sub, crashModel(round, g, acked[g]))
			}
		}
		t.Logf("round %d: acked %v", round, acked)
		done[round] = got
		must(t, s.Close())
	}
}
