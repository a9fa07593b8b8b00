package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"gregor/replication/zkstore"
	"gregor/test/harness"
	"gregor/test/zkharness"
)

// startAdminCluster is startCluster with an admin listener (POST /faults,
// GET /actors) on a free port per broker; it returns the listeners' base URLs.
func startAdminCluster(t *testing.T, n int) (*cluster, map[int32]string) {
	t.Helper()
	if testing.Short() {
		t.Skip("cluster tests start ZooKeeper and broker processes")
	}
	zk := zkharness.Start(t, zkharness.Options{})
	c := &cluster{t: t, zk: zk, connect: zk.Addr() + "/gregor", brokers: map[int32]*harness.Broker{}}
	admins := map[int32]string{}
	for id := int32(1); id <= int32(n); id++ {
		port := harness.FreePort(t)
		admins[id] = fmt.Sprintf("http://127.0.0.1:%d", port)
		c.brokers[id] = harness.StartBroker(t, map[string]string{
			"broker.id":                            strconv.Itoa(int(id)),
			"zookeeper.connect":                    c.connect,
			"zookeeper.session.timeout.ms":         strconv.Itoa(int(sessionTimeout / time.Millisecond)),
			"admin.listener":                       fmt.Sprintf("127.0.0.1:%d", port),
			"default.replication.factor":           strconv.Itoa(n),
			"offsets.topic.replication.factor":     strconv.Itoa(n),
			"num.partitions":                       "3",
			"replica.lag.time.max.ms":              "3000",
			"controlled.shutdown.max.retries":      "2", // attempts, as Kafka counts them
			"controlled.shutdown.retry.backoff.ms": "500",
		})
	}
	s, err := zkstore.Open(c.connect, zkstore.Config{SessionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatalf("test ZooKeeper session: %v", err)
	}
	c.store = s
	t.Cleanup(func() { s.Close() })
	c.waitFor("every broker registered", 60*time.Second, func() (bool, string) {
		ids := c.registered()
		return len(ids) == n, fmt.Sprint(ids)
	})
	return c, admins
}

// controllerActorRestarts reads the restarts of the "controller" actor
// from GET /actors on an admin listener (-1 when it is not listed).
func controllerActorRestarts(hc *http.Client, admin string) int64 {
	resp, err := hc.Get(admin + "/actors?kind=controller")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var out []struct {
		Path     string `json:"path"`
		Restarts int64  `json:"restarts"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&out) != nil {
		return -1
	}
	for _, a := range out {
		if a.Path == "controller" {
			return a.Restarts
		}
	}
	return -1
}

// TestControllerActorKill kills the active controller's actor through
// POST /faults while a topic is being created and a stopped broker comes
// back. The actor restarts (restarts in GET /actors), takes over again
// with a higher controller epoch, the topic creation succeeds (retrying
// NOT_CONTROLLER if it met the crash), the returning broker learns its
// followership from the resent LeaderAndIsr (it rejoins every ISR) and its
// leadership from a preferred election, and admin requests work after.
func TestControllerActorKill(t *testing.T) {
	c, admins := startAdminCluster(t, 3)
	hc := &http.Client{Timeout: 10 * time.Second}
	c.createTopic("before", 3, 3, nil)
	ctl := c.controllerID()
	var other int32 = 1
	for other == ctl {
		other++
	}
	c.brokers[other].Stop()
	c.waitUnregistered(other)
	c.waitFor("ISRs without the stopped broker", 30*time.Second, func() (bool, string) {
		for p := int32(0); p < 3; p++ {
			s, _ := c.partitionState("before", p)
			if s.Leader < 0 || s.Leader == other || contains(s.ISR, other) {
				return false, fmt.Sprintf("p%d %+v", p, s)
			}
		}
		return true, ""
	})
	epoch := controllerEpoch(t, c)

	body := `{"action":"kill","actor":"controller"}`
	resp, err := hc.Post(admins[ctl]+"/faults", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /faults: %s", resp.Status)
	}

	// Create a topic while the actor restarts (the client retries
	// retriable errors; the loop retries what reaches it).
	adm := kadm.NewClient(c.client())
	created := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(60 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			res, err := adm.CreateTopics(ctx, 2, 2, nil, "during")
			cancel()
			if err == nil {
				err = res["during"].Err
			}
			if err == nil || errors.Is(err, kerr.TopicAlreadyExists) {
				created <- nil
				return
			}
			if time.Now().After(deadline) || !(errors.Is(err, kerr.NotController) || errors.Is(err, kerr.RequestTimedOut) || errors.Is(err, context.DeadlineExceeded)) {
				created <- err
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	c.brokers[other].Start() // a broker coming back while the controller recovers
	if err := <-created; err != nil {
		t.Fatalf("create during the controller restart: %v", err)
	}

	c.waitFor("controller actor restarted", 30*time.Second, func() (bool, string) {
		n := controllerActorRestarts(hc, admins[ctl])
		return n >= 1, fmt.Sprint(n)
	})
	c.waitFor("a new controller epoch", 30*time.Second, func() (bool, string) {
		e := controllerEpoch(t, c)
		return e > epoch && c.controllerID() > 0, fmt.Sprintf("epoch %d controller %d", e, c.controllerID())
	})
	c.waitFor("the returning broker back in every ISR", 60*time.Second, func() (bool, string) {
		for p := int32(0); p < 3; p++ {
			s, _ := c.partitionState("before", p)
			if !contains(s.ISR, other) {
				return false, fmt.Sprintf("p%d %+v", p, s)
			}
		}
		return true, ""
	})
	c.waitFor("leaders of the topic created during the restart", 30*time.Second, func() (bool, string) {
		for p := int32(0); p < 2; p++ {
			s, ok := c.partitionState("during", p)
			if !ok || s.Leader < 0 || len(s.ISR) != 2 {
				return false, fmt.Sprintf("p%d %+v", p, s)
			}
		}
		return true, ""
	})

	// Admin requests after the restart: a preferred election gives the
	// returning broker back the partitions it prefers, and it serves them.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil); err != nil {
		t.Fatalf("ElectLeaders after the restart: %v", err)
	}
	c.waitFor("the returning broker leading its preferred partitions", 30*time.Second, func() (bool, string) {
		td, err := describe(t, c.brokers[other], "before")
		if err != nil {
			return false, err.Error()
		}
		for _, p := range td.Partitions {
			if len(p.Replicas) > 0 && p.Replicas[0] == other && p.Leader != other {
				return false, fmt.Sprintf("p%d leader %d replicas %v", p.Partition, p.Leader, p.Replicas)
			}
		}
		return true, ""
	})
	c.createTopic("after", 1, 3, nil)
}
