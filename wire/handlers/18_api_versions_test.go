package handlers

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/replication/metadata"
	"gregor/wire"
)

func apiVersions(t *testing.T, b *Broker, req *kmsg.ApiVersionsRequest) *kmsg.ApiVersionsResponse {
	t.Helper()
	rc := &wire.RequestContext{Key: 18, Version: req.Version}
	resp, ok := b.Handle(rc, req).TryResolve()
	if !ok || resp.Msg == nil {
		t.Fatal("ApiVersions did not answer a message at once")
	}
	return resp.Msg.(*kmsg.ApiVersionsResponse)
}

func TestApiVersionsListsRegisteredRanges(t *testing.T) {
	b := &Broker{Log: zap.NewNop()}
	want := SupportedRanges()
	for v := int16(0); v <= 4; v++ {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "franz-go", "1.22.3"
		resp := apiVersions(t, b, req)
		if resp.ErrorCode != 0 || len(resp.ApiKeys) != len(want) {
			t.Fatalf("v%d: error %d, %d keys; want %d keys", v, resp.ErrorCode, len(resp.ApiKeys), len(want))
		}
		var self bool
		for i, k := range resp.ApiKeys {
			if k.ApiKey != want[i].Key || k.MinVersion != want[i].MinVersion || k.MaxVersion != want[i].MaxVersion {
				t.Fatalf("v%d key %d: %+v; want %+v", v, i, k, want[i])
			}
			self = self || (k.ApiKey == 18 && k.MinVersion == 0 && k.MaxVersion == 4)
		}
		if !self {
			t.Fatalf("v%d: ApiVersions 0-4 not advertised", v)
		}
		// Encodes and decodes at the version asked.
		resp.SetVersion(v)
		back := kmsg.NewPtrApiVersionsResponse()
		back.Version = v
		if err := back.ReadFrom(resp.AppendTo(nil)); err != nil || len(back.ApiKeys) != len(want) {
			t.Fatalf("v%d round trip: %v", v, err)
		}
	}
}

func TestApiVersionsValidatesSoftwareFields(t *testing.T) {
	b := &Broker{Log: zap.NewNop()}
	for _, tc := range []struct {
		name, version string
		ok            bool
	}{
		{"kgo", "1.0.0", true},
		{"librdkafka", "2.3.0-RC1", true},
		{"a", "1", true},
		{"", "1.0", false},
		{"bad name", "1.0", false},
		{"-lead", "1.0", false},
		{"trail.", "1.0", false},
		{"ok", "1.0_beta", false},
	} {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = tc.name, tc.version
		resp := apiVersions(t, b, req)
		if tc.ok && resp.ErrorCode != 0 {
			t.Errorf("%q/%q rejected with %d", tc.name, tc.version, resp.ErrorCode)
		}
		if !tc.ok && (resp.ErrorCode != kerr.InvalidRequest.Code || len(resp.ApiKeys) != 0) {
			t.Errorf("%q/%q: error %d with %d keys; want INVALID_REQUEST and none", tc.name, tc.version, resp.ErrorCode, len(resp.ApiKeys))
		}
		// v0-2 carry no software fields: never validated.
		req.Version = 2
		if resp := apiVersions(t, b, req); resp.ErrorCode != 0 {
			t.Errorf("v2 validated software fields")
		}
	}
}

// TestApiVersionsFeatures: v3+ answers no supported features, the
// finalized features of the cache and its epoch (-1 with none known),
// and they survive encoding at v3 (tagged fields); v0-2 carry none.
func TestApiVersionsFeatures(t *testing.T) {
	fc := &metadata.FeatureCache{}
	b := &Broker{Log: zap.NewNop(), Features: fc}
	ask := func(v int16) *kmsg.ApiVersionsResponse {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "franz-go", "1.22.3"
		resp := apiVersions(t, b, req)
		resp.SetVersion(v)
		back := kmsg.NewPtrApiVersionsResponse()
		back.Version = v
		if err := back.ReadFrom(resp.AppendTo(nil)); err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		return back
	}
	if r := ask(3); r.FinalizedFeaturesEpoch != -1 || len(r.FinalizedFeatures) != 0 || len(r.SupportedFeatures) != 0 {
		t.Fatalf("no /feature read: epoch %d finalized %+v supported %+v", r.FinalizedFeaturesEpoch, r.FinalizedFeatures, r.SupportedFeatures)
	}
	if err := fc.Update(map[string]int16{}, 7); err != nil {
		t.Fatal(err)
	}
	for _, v := range []int16{3, 4} {
		if r := ask(v); r.FinalizedFeaturesEpoch != 7 || len(r.FinalizedFeatures) != 0 || len(r.SupportedFeatures) != 0 {
			t.Fatalf("v%d: epoch %d finalized %+v supported %+v, want epoch 7 and no features", v, r.FinalizedFeaturesEpoch, r.FinalizedFeatures, r.SupportedFeatures)
		}
	}
	if r := ask(2); r.FinalizedFeaturesEpoch != -1 { // not on the wire before v3: the decoder's default
		t.Fatalf("v2 carried epoch %d", r.FinalizedFeaturesEpoch)
	}
	fc.Clear()
	if r := ask(3); r.FinalizedFeaturesEpoch != -1 {
		t.Fatalf("cleared: epoch %d", r.FinalizedFeaturesEpoch)
	}
}
