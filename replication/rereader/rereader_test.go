package rereader

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func TestRereaderLoadsAndRetries(t *testing.T) {
	var mu sync.Mutex
	loads := map[string]int{}
	failures := map[string]int{}
	done := make(chan string, 16)
	r := Start(func(k string) error {
		mu.Lock()
		defer mu.Unlock()
		loads[k]++
		if k == "flaky" && loads[k] < 3 {
			return errors.New("store down")
		}
		done <- k
		return nil
	}, func(k string, err error) {
		mu.Lock()
		failures[k]++
		mu.Unlock()
	})
	defer r.Close()
	r.Changed("a")
	r.Changed("flaky")
	got := map[string]bool{}
	deadline := time.After(10 * time.Second)
	for len(got) < 2 {
		select {
		case k := <-done:
			got[k] = true
		case <-deadline:
			t.Fatalf("loaded %v within 10 s", got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if loads["flaky"] != 3 || failures["flaky"] != 2 || loads["a"] != 1 {
		t.Fatalf("loads %v failures %v; want flaky loaded 3 times after 2 failures, a once", loads, failures)
	}
}

func TestRereaderCloseWhileRetrying(t *testing.T) {
	failed := make(chan struct{}, 1)
	r := Start(func(string) error { return errors.New("never") }, func(string, error) {
		select {
		case failed <- struct{}{}:
		default:
		}
	})
	r.Changed("k")
	<-failed // it now waits in its backoff
	stopped := make(chan struct{})
	go func() { r.Close(); r.Close(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not stop a retrying Rereader")
	}
}
