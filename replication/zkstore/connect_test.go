package zkstore

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"gregor/config"
)

func TestParseConnect(t *testing.T) {
	cases := []struct {
		in      string
		servers []string
		chroot  string
	}{
		{"127.0.0.1:2181", []string{"127.0.0.1:2181"}, ""},
		{"a:1,b:2,c:3/kafka", []string{"a:1", "b:2", "c:3"}, "/kafka"},
		{"zk1:2181/kafka/prod", []string{"zk1:2181"}, "/kafka/prod"},
		{"zk1,zk2:2182", []string{"zk1:2181", "zk2:2182"}, ""},
		{"zk1:2181/", []string{"zk1:2181"}, ""},
		{" [::1]:2181 , zk2:1 ", []string{"[::1]:2181", "zk2:1"}, ""},
	}
	for _, c := range cases {
		servers, chroot, err := ParseConnect(c.in)
		if err != nil {
			t.Errorf("ParseConnect(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(servers, c.servers) || chroot != c.chroot {
			t.Errorf("ParseConnect(%q) = %v %q, want %v %q", c.in, servers, chroot, c.servers, c.chroot)
		}
	}
	for _, bad := range []string{"", "/kafka", ",", "zk:2181/kafka/", "zk:2181//x", "zk:2181/a/../b"} {
		if _, _, err := ParseConnect(bad); !errors.Is(err, ErrBadConnect) {
			t.Errorf("ParseConnect(%q) err = %v, want ErrBadConnect", bad, err)
		}
	}
}

func TestConfigFromBroker(t *testing.T) {
	b := config.Defaults()
	b.ZookeeperSessionTimeout = 6 * time.Second
	b.ZookeeperConnectionTimeout = 2 * time.Second
	c := ConfigFromBroker(b, nil)
	if c.SessionTimeout != 6*time.Second || c.ConnectionTimeout != 2*time.Second {
		t.Fatalf("config = %+v", c)
	}
}
