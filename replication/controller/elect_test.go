package controller

import (
	"fmt"
	"slices"
	"testing"

	"gregor/replication/metastore"
	"gregor/replication/zkmeta"
)

// epochRacer is a store on which another controller bumps
// /controller_epoch right after this one read it.
type epochRacer struct {
	metastore.Store
	raced bool
}

func (r *epochRacer) Get(path string) ([]byte, int32, error) {
	data, v, err := r.Store.Get(path)
	if path == zkmeta.ControllerEpochPath && !r.raced {
		r.raced = true
		if _, serr := r.Store.Set(path, zkmeta.EncodeControllerEpoch(9), v); serr != nil {
			return nil, 0, serr
		}
	}
	return data, v, err
}

// stateRecorder records, after every write that reaches the store, who
// holds /controller and the /controller_epoch then.
type stateRecorder struct {
	metastore.Store
	seen []string
}

func (r *stateRecorder) record() {
	data, _, _ := r.Store.Get(zkmeta.ControllerEpochPath)
	e, _ := zkmeta.DecodeControllerEpoch(data)
	r.seen = append(r.seen, fmt.Sprintf("controller %d epoch %d", zkmeta.ReadController(r.Store.Get), e))
}

func (r *stateRecorder) Create(path string, data []byte, ephemeral bool) error {
	defer r.record()
	return r.Store.Create(path, data, ephemeral)
}

func (r *stateRecorder) Set(path string, data []byte, version int32) (int32, error) {
	defer r.record()
	return r.Store.Set(path, data, version)
}

func (r *stateRecorder) Multi(ops ...metastore.Op) ([]metastore.OpResult, error) {
	defer r.record()
	return r.Store.Multi(ops...)
}

// TestElectionIsOneTransaction: winning the election creates /controller
// and bumps /controller_epoch together (Kafka's
// registerControllerAndIncrementControllerEpoch), so a broker that reads
// /controller reads the new epoch; an epoch changed between the read and
// the write leaves /controller unclaimed and the epoch as the other wrote it.
func TestElectionIsOneTransaction(t *testing.T) {
	c, _ := executorEnv(t, 1)
	s := c.store.(*multiCounter).Store
	rec := &stateRecorder{Store: s}
	c.setStore(rec)
	c.epoch = 0
	if err := c.elect(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"controller 0 epoch 4"}; !slices.Equal(rec.seen, want) {
		t.Fatalf("states the store went through: %q, want %q", rec.seen, want)
	}
	data, _, err := s.Get(zkmeta.ControllerEpochPath)
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := zkmeta.DecodeControllerEpoch(data); e != 4 || c.epoch != 4 || !c.active {
		t.Fatalf("after winning: /controller_epoch %d, controller epoch %d, active %v; want 4, 4, true", e, c.epoch, c.active)
	}
	if id := zkmeta.ReadController(s.Get); id != c.cfg.BrokerID {
		t.Fatalf("/controller names %d, want %d", id, c.cfg.BrokerID)
	}
	if err := s.Delete(zkmeta.ControllerPath, metastore.AnyVersion); err != nil {
		t.Fatal(err)
	}

	c.setStore(&epochRacer{Store: s})
	c.active, c.epoch = false, 0
	if err := c.elect(); err == nil {
		t.Fatal("election over a concurrently bumped epoch succeeded")
	}
	if ok, _ := s.Exists(zkmeta.ControllerPath); ok || c.active {
		t.Fatalf("/controller exists %v, active %v after a lost race; want neither", ok, c.active)
	}
	data, _, _ = s.Get(zkmeta.ControllerEpochPath)
	if e, _ := zkmeta.DecodeControllerEpoch(data); e != 9 {
		t.Fatalf("/controller_epoch %d after the lost race, want the other's 9", e)
	}
}
