package zkharness

import (
	"net"
	"strings"
	"testing"
	"time"
)

func TestServerStartStopRestart(t *testing.T) {
	s := Start(t, Options{})
	if s.PID() == 0 {
		t.Fatal("no pid after Start")
	}
	out, err := s.FourLetterWord("srvr")
	if err != nil || !strings.Contains(out, "Mode: standalone") {
		t.Fatalf("srvr = %q, %v; want Mode: standalone", out, err)
	}
	if out, _ := s.FourLetterWord("conf"); !strings.Contains(out, "tickTime=500") {
		t.Fatalf("conf does not show tickTime=500:\n%s", out)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if s.PID() != 0 {
		t.Fatal("pid after Kill")
	}
	if c, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		c.Close()
		t.Fatal("port still accepts connections after Kill")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
}

func TestProxyPauseResume(t *testing.T) {
	// An echo server stands in for ZooKeeper: the proxy is plain TCP.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					c.Write(buf[:n])
				}
			}()
		}
	}()
	p := NewProxy(t, ln.Addr().String())
	echo := func(c net.Conn) error {
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		buf := make([]byte, 4)
		_, err := c.Read(buf)
		if err == nil && string(buf) != "ping" {
			t.Fatalf("echo through proxy = %q", buf)
		}
		return err
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := echo(c); err != nil {
		t.Fatalf("echo before pause: %v", err)
	}
	p.Pause()
	if err := echo(c); err == nil {
		t.Fatal("open connection still works after Pause")
	}
	c2, err := net.Dial("tcp", p.Addr())
	if err == nil {
		if echo(c2) == nil {
			t.Fatal("new connection works while paused")
		}
		c2.Close()
	}
	p.Resume()
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if err := echo(c3); err != nil {
		t.Fatalf("echo after resume: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
