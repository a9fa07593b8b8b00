package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// single is one zero-config broker under measurement.
type single struct {
	o          opts
	n          *node
	l          layout
	cl         *kgo.Client
	unregister func()
}

func startSingle(o opts, dir string, partitions int) (*single, error) {
	n, err := newNode(o.gregor, o.config, dir, 0, nil)
	if err != nil {
		return nil, err
	}
	s := &single{o: o, n: n, l: layout{prefix: "scale", total: partitions, perTopic: o.perTopic}}
	if err := n.start(); err != nil {
		return nil, err
	}
	s.unregister = onInterrupt(n.kill)
	if err := n.proc.WaitKafka(n.addr(), 60*time.Second); err != nil {
		s.close()
		return nil, fmt.Errorf("empty broker: %w; log: %s", err, n.logTail(5))
	}
	if s.cl, err = newClient([]string{n.addr()}); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *single) close() {
	if s.cl != nil {
		s.cl.Close()
	}
	s.n.stop()
	s.unregister()
}

// create creates every partition and waits until Metadata reports each
// led; it returns the time and how far it got.
func (s *single) create(part, profile string) (time.Duration, ledState, error) {
	return s.createDetail(part, profile, nil)
}

// createDetail is create that also reports into detail (when not nil)
// when the CreateTopics requests were answered and how far it got.
func (s *single) createDetail(part, profile string, detail *string) (time.Duration, ledState, error) {
	st := newStep(s.o.bound(barCreateSingle))
	defer st.done()
	st.watch(s.n)
	var prof <-chan error
	if profile != "" {
		prof = s.n.profile(min(s.o.profileSeconds, int(s.o.bound(barCreateSingle)/time.Second)), profile)
	}
	err := createTopics(st.ctx, s.cl, s.l, 1, s.o.batch)
	answered := st.elapsed()
	var state ledState
	if err == nil {
		state, err = waitLed(st.ctx, s.cl, s.l, -1)
	}
	d := st.elapsed()
	if prof != nil {
		if perr := <-prof; perr != nil {
			fmt.Printf("%-8s CPU profile: %v\n", part, perr)
		} else {
			fmt.Printf("%-8s CPU profile of the broker, %d s from the start of creation: %s\n", part, s.o.profileSeconds, profile)
		}
	}
	if err != nil && s.n.running() {
		// How far it got: the step's context is over, so a fresh bound.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if now, lerr := led(ctx, s.cl, s.l, -1); lerr == nil {
			state = now
		}
		cancel()
	}
	if detail != nil {
		*detail = fmt.Sprintf("(CreateTopics answered at %.2f s) %s", answered.Seconds(), ledDetail(state, s.l.total, st.began))
	}
	return d, state, st.err(err)
}

// restartResult is one restart: the total (signal to all led again),
// the time the stop took and how far the wait for leaders got.
type restartResult struct {
	total, stopped time.Duration
	state          ledState
	detail         string
}

// restart stops the broker with sig (SIGTERM: clean; SIGKILL), starts
// it again and waits until every partition is led.
func (s *single) restart(sig syscall.Signal, bar time.Duration) (r restartResult, err error) {
	st := newStep(s.o.bound(bar))
	defer func() {
		r.total = st.elapsed()
		r.detail = fmt.Sprintf("(stop %.2f s) %s", r.stopped.Seconds(), ledDetail(r.state, s.l.total, st.began))
		st.done()
	}()
	if !s.n.proc.Signal(sig, s.o.bound(bar)) {
		s.n.proc.Kill()
		r.stopped = st.elapsed()
		return r, fmt.Errorf("broker did not exit on %v within %v (killed)", sig, s.o.bound(bar))
	}
	r.stopped = st.elapsed()
	if err := s.n.start(); err != nil {
		return r, err
	}
	st.watch(s.n)
	s.cl.Close()
	if s.cl, err = newClient([]string{s.n.addr()}); err != nil {
		return r, err
	}
	r.state, err = waitLed(st.ctx, s.cl, s.l, -1)
	return r, st.err(err)
}

// ledDetail says how many of total partitions were led and, when not all
// were, since when (relative to the step's start, began) none more.
func ledDetail(state ledState, total int, began time.Time) string {
	if state.led < total && !state.grewAt.IsZero() {
		return fmt.Sprintf("(%d of %d led; none more after %.1f s)", state.led, total, state.grewAt.Sub(began).Seconds())
	}
	return fmt.Sprintf("(%d of %d led)", state.led, total)
}

func runSingle(o opts) error {
	fmt.Printf("single   zero-config single node (%s overlaid), %d partitions (%d-partition topics, %d topics per CreateTopics), replication factor 1\n",
		o.config, o.partitions, o.perTopic, o.batch)
	s, err := startSingle(o, filepath.Join(o.tmp, "single"), o.partitions)
	if err != nil {
		return err
	}
	defer s.close()
	fds0, rss0, desc0 := s.n.limits()
	info("single", "empty broker", desc0)

	prof := ""
	if o.profileDir != "" {
		prof = filepath.Join(o.profileDir, "single-create.pprof")
	}
	var detail string
	d, state, err := s.createDetail("single", prof, &detail)
	figure("single", fmt.Sprintf("%d partitions created and led", o.partitions), d, barCreateSingle, err, detail)
	if !s.n.running() {
		return fmt.Errorf("broker exited; log: %s", s.n.logTail(5))
	}
	fds1, rss1, desc1 := s.n.limits()
	info("single", "after creation", desc1)
	perPart := float64(rss1-rss0) / float64(max(state.led, 1))
	info("single", "RSS per idle partition", fmt.Sprintf("%.1f KiB ((%.1f − %.1f MiB) / %d led partitions); %+d fds",
		perPart/1024, float64(rss1)/(1<<20), float64(rss0)/(1<<20), state.led, fds1-fds0))

	s.metadata()
	if err == nil {
		s.produce()
	} else {
		info("single", fmt.Sprintf("one acks=all record to each of %d partitions", s.l.total), "skipped: not every partition is led")
	}

	r, err := s.restart(syscall.SIGTERM, barRestartClean)
	figure("single", "clean restart (SIGTERM, start, all led)", r.total, barRestartClean, err, r.detail)
	if s.n.running() {
		r, err = s.restart(syscall.SIGKILL, barRestartKill)
		figure("single", "kill -9 restart (SIGKILL, start, all led)", r.total, barRestartKill, err, r.detail)
	} else {
		fmt.Printf("%-8s %-52s FAIL: skipped, the broker did not come back from the clean restart\n", "single", "kill -9 restart (SIGKILL, start, all led)")
	}
	return nil
}

func (s *single) metadata() {
	st := newStep(s.o.bound(barMetadata)*time.Duration(s.o.metadataRuns+1) + 10*time.Second)
	defer st.done()
	st.watch(s.n)
	med, all, err := metadataLatency(st.ctx, s.cl, s.o.metadataRuns)
	ms := make([]string, len(all))
	for i, d := range all {
		ms[i] = fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
	}
	figure("single", fmt.Sprintf("full Metadata request, median of %d", s.o.metadataRuns), med, barMetadata, st.err(err),
		fmt.Sprintf("runs [%s] ms", strings.Join(ms, " ")))
}

func (s *single) produce() {
	st := newStep(s.o.produceBound)
	defer st.done()
	st.watch(s.n)
	err := produceEach(st.ctx, []string{s.n.addr()}, s.l)
	v := fmt.Sprintf("%.2f s", st.elapsed().Seconds())
	if err = st.err(err); err != nil {
		v += fmt.Sprintf(" FAIL: %v", err)
	}
	info("single", fmt.Sprintf("one acks=all record to each of %d partitions", s.l.total), v)
}

// runSteps is the model: creation, clean restart and Metadata latency at
// growing sizes, each on a fresh broker, then the table. A size whose
// creation reaches its bound ends the run (the bigger ones would too).
func runSteps(o opts) error {
	sizes := []int{1000, 5000, 10000, 20000}
	type row struct {
		n               int
		create, restart string
		metadata, fds   string
	}
	var rows []row
	for i, n := range sizes {
		fmt.Printf("steps    %d partitions\n", n)
		s, err := startSingle(o, filepath.Join(o.tmp, fmt.Sprintf("steps-%d", n)), n)
		if err != nil {
			return err
		}
		prof := ""
		if o.profileDir != "" {
			prof = filepath.Join(o.profileDir, fmt.Sprintf("steps-%d-create.pprof", n))
		}
		r := row{n: n, restart: "-", metadata: "-", fds: "-"}
		var detail string
		d, state, err := s.createDetail("steps", prof, &detail)
		figure("steps", fmt.Sprintf("%d partitions created and led", n), d, barCreateSingle, err, detail)
		r.create = fmt.Sprintf("%.2f", d.Seconds())
		created := err == nil
		if !created {
			r.create = fmt.Sprintf(">%.0f (%d led)", d.Seconds(), state.led)
		}
		if s.n.running() {
			fds, _, _ := s.n.limits()
			r.fds = fmt.Sprint(fds)
		}
		if created {
			st := newStep(30 * time.Second)
			med, _, err := metadataLatency(st.ctx, s.cl, o.metadataRuns)
			st.done()
			if err == nil {
				r.metadata = fmt.Sprintf("%.1f", float64(med)/float64(time.Millisecond))
			}
			rr, err := s.restart(syscall.SIGTERM, barRestartClean)
			figure("steps", fmt.Sprintf("%d partitions clean restart", n), rr.total, barRestartClean, err, rr.detail)
			r.restart = fmt.Sprintf("%.2f", rr.total.Seconds())
			if err != nil {
				r.restart = fmt.Sprintf(">%.0f (%d led)", rr.total.Seconds(), rr.state.led)
			}
		}
		s.close()
		rows = append(rows, r)
		if !created {
			for _, m := range sizes[i+1:] {
				rows = append(rows, row{n: m, create: "skipped", restart: "-", metadata: "-", fds: "-"})
			}
			break
		}
	}
	fmt.Println()
	fmt.Printf("%-11s %-20s %-20s %-14s %s\n", "partitions", "create+led s", "clean restart s", "metadata ms", "fds after create")
	for _, r := range rows {
		fmt.Printf("%-11d %-20s %-20s %-14s %s\n", r.n, r.create, r.restart, r.metadata, r.fds)
	}
	return nil
}
