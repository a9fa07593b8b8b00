package handlers

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

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
