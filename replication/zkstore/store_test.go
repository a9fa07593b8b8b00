package zkstore

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"gregor/replication/metastore"
	"gregor/replication/metastore/storetest"
	"gregor/test/zkharness"
)

// One server for the package: each test works under its own chroot.
var (
	srvOnce sync.Once
	srv     *zkharness.Server
	srvDir  string
	srvErr  error
	chroots atomic.Int64
)

func TestMain(m *testing.M) {
	code := m.Run()
	if srv != nil {
		srv.Kill()
	}
	if srvDir != "" {
		os.RemoveAll(srvDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Println("goleak:", err)
			code = 1
		}
	}
	exitCode(code)
}

// server starts the package's ZooKeeper on first use.
func server(t testing.TB) *zkharness.Server {
	t.Helper()
	zkharness.SkipIfUnavailable(t)
	srvOnce.Do(func() {
		dir, err := mkdirTemp()
		if err != nil {
			srvErr = err
			return
		}
		srvDir = dir
		s, err := zkharness.New(dir, zkharness.Options{})
		if err != nil {
			srvErr = err
			return
		}
		if srvErr = s.Start(); srvErr == nil {
			srv = s
		}
	})
	if srvErr != nil {
		t.Fatal(srvErr)
	}
	return srv
}

// openT opens a store on connect and closes it when the test ends.
func openT(t *testing.T, connect string, timeout time.Duration) *Store {
	t.Helper()
	s, err := Open(connect, Config{SessionTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func freshChroot() string { return fmt.Sprintf("/test%d/c", chroots.Add(1)) }

func TestConformance(t *testing.T) {
	addr := server(t).Addr()
	storetest.Run(t, func(t *testing.T) metastore.Store {
		return openT(t, addr+freshChroot(), 4*time.Second)
	})
}

func TestChrootIsCreatedAndIsolates(t *testing.T) {
	addr := server(t).Addr()
	chroot := freshChroot()
	s := openT(t, addr+chroot, 4*time.Second)
	root := openT(t, addr, 4*time.Second)
	if err := metastore.CreateAll(s, "/brokers/ids", nil, false); err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateSequential("/brokers/ids/x_", []byte("v"), false)
	if err != nil {
		t.Fatal(err)
	}
	if p != "/brokers/ids/x_0000000000" {
		t.Fatalf("sequential path under chroot = %q", p)
	}
	data, _, err := root.Get(chroot + "/brokers/ids/x_0000000000")
	if err != nil || string(data) != "v" {
		t.Fatalf("root view of the chrooted node: %q, %v", data, err)
	}
	kids, err := s.Children("/")
	if err != nil || len(kids) != 1 || kids[0] != "brokers" {
		t.Fatalf("children of the chroot = %v, %v; want [brokers]", kids, err)
	}
	// Multi under a chroot returns chroot-relative paths.
	res, err := s.Multi(&metastore.CreateOp{Path: "/m", Data: []byte("1")}, &metastore.SetOp{Path: "/m", Data: []byte("2"), Version: 0})
	if err != nil || res[0].Path != "/m" || res[1].Version != 1 {
		t.Fatalf("multi under chroot = %+v, %v", res, err)
	}
}

func TestEphemeralGoneAfterClose(t *testing.T) {
	addr := server(t).Addr() + freshChroot()
	owner := openT(t, addr, 4*time.Second)
	observer := openT(t, addr, 4*time.Second)
	if err := owner.Create("/ids", nil, false); err != nil {
		t.Fatal(err)
	}
	if err := owner.Create("/ids/1", []byte("b1"), true); err != nil {
		t.Fatal(err)
	}
	// A second session cannot take the same ephemeral.
	if err := observer.Create("/ids/1", nil, true); !errors.Is(err, metastore.ErrNodeExists) {
		t.Fatalf("second registration err = %v, want ErrNodeExists", err)
	}
	_, _, w, err := observer.GetW("/ids/1")
	if err != nil {
		t.Fatal(err)
	}
	_, _, pending, err := owner.GetW("/ids")
	if err != nil {
		t.Fatal(err)
	}
	owner.Close()
	if ev := <-pending; ev.Type != metastore.EventNotWatching {
		t.Fatalf("owner's pending watch after Close = %v, want NotWatching", ev.Type)
	}
	select {
	case ev := <-w:
		if ev.Type != metastore.EventNodeDeleted || ev.Path != "/ids/1" {
			t.Fatalf("observer event = %+v, want NodeDeleted /ids/1", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ephemeral not deleted within 10s of Close")
	}
	if _, _, err := owner.Get("/ids"); !errors.Is(err, metastore.ErrClosed) {
		t.Fatalf("Get after Close err = %v, want ErrClosed", err)
	}
}

func TestOpenTimesOut(t *testing.T) {
	// A listener that accepts nothing useful: a closed port.
	port, err := freePortForTest()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = Open(fmt.Sprintf("127.0.0.1:%d", port), Config{SessionTimeout: 2 * time.Second, ConnectionTimeout: 500 * time.Millisecond})
	if err == nil {
		t.Fatal("Open succeeded without a server")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Open took %v to give up, want about 500ms", d)
	}
}

func TestBadVersionAndFencedMulti(t *testing.T) {
	s := openT(t, server(t).Addr()+freshChroot(), 4*time.Second)
	if err := s.Create("/controller_epoch", []byte("1"), false); err != nil {
		t.Fatal(err)
	}
	if err := s.Create("/state", []byte("{}"), false); err != nil {
		t.Fatal(err)
	}
	// Another controller bumps the epoch: our check on version 0 fails.
	if _, err := s.Set("/controller_epoch", []byte("2"), 0); err != nil {
		t.Fatal(err)
	}
	_, err := s.Multi(&metastore.CheckVersionOp{Path: "/controller_epoch", Version: 0},
		&metastore.SetOp{Path: "/state", Data: []byte("zombie"), Version: 0})
	var me *metastore.MultiError
	if !errors.As(err, &me) || me.Index != 0 || !errors.Is(err, metastore.ErrBadVersion) {
		t.Fatalf("fenced multi err = %v, want MultiError{0, ErrBadVersion}", err)
	}
	if data, v, _ := s.Get("/state"); string(data) != "{}" || v != 0 {
		t.Fatalf("fenced multi wrote /state = %q v%d", data, v)
	}
}
