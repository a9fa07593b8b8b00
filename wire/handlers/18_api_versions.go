package handlers

// ApiVersions: v0-4
//
// Behaviour:
//   - Lists every registered API key with its served version range
//     (SupportedRanges), so clients pick versions from what Gregor serves.
//   - A version above 4 never reaches this handler: the server answers it
//     with a v0 response carrying UNSUPPORTED_VERSION and our ranges (KIP-511).
//   - v3+: ClientSoftwareName/ClientSoftwareVersion are accepted when they
//     match Kafka's pattern [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?;
//     otherwise INVALID_REQUEST with no keys (as Kafka's
//     ApiVersionsRequest.isValid and getErrorResponse).
//   - v3+ features (KIP-584), as a Kafka 3.9 broker in ZooKeeper mode
//     (DefaultApiVersionManager over ZkMetadataCache): SupportedFeatures
//     empty (KafkaServer's BrokerFeatures.createEmpty); FinalizedFeatures
//     and FinalizedFeaturesEpoch from /feature as this broker last read it
//     (Broker.Features, kept by the controller's watch on every broker:
//     replication/controller/features.go): the znode's data version as
//     the epoch, or no features and epoch -1 while /feature is absent,
//     disabled or unreadable. A level-0 feature is left out, as Kafka's
//     createFinalizedFeatureKeys does.
//
// Version notes:
//   - v1: ThrottleMillis.
//   - v2: same as v1 (throttling applied after the response).
//   - v3: flexible (compact strings, tagged fields); ClientSoftwareName and
//     ClientSoftwareVersion (KIP-511); the RESPONSE header stays v0 so that
//     a client that sent a too-new version can still parse the answer.
//   - v4: same as v3 (signals a client can handle UNSUPPORTED_VERSION with
//     the v0 fallback, KIP-511 follow-up).

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/replication/metadata"
	"gregor/wire"
)

func init() { register(18, 0, 4, handleApiVersions) }

func handleApiVersions(b *Broker, _ *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.ApiVersionsRequest)
	resp := req.ResponseKind().(*kmsg.ApiVersionsResponse)
	if req.Version >= 3 && (!validSoftwareField(req.ClientSoftwareName) || !validSoftwareField(req.ClientSoftwareVersion)) {
		// As Kafka's ApiVersionsRequest.getErrorResponse: the error alone,
		// no keys (only UNSUPPORTED_VERSION carries a range).
		resp.ErrorCode = kerr.InvalidRequest.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	for _, r := range SupportedRanges() {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = r.Key, r.MinVersion, r.MaxVersion
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	if req.Version >= 3 {
		addFeatures(resp, b.Features.Load())
	}
	return wire.Now(wire.Response{Msg: resp})
}

// addFeatures fills the KIP-584 fields (tagged, v3+) of resp with the
// supported features (none) and f, by name.
func addFeatures(resp *kmsg.ApiVersionsResponse, f *metadata.Finalized) {
	for _, name := range slices.Sorted(maps.Keys(metadata.SupportedFeatures)) {
		r := metadata.SupportedFeatures[name]
		sf := kmsg.NewApiVersionsResponseSupportedFeature()
		sf.Name, sf.MinVersion, sf.MaxVersion = name, r[0], r[1]
		resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
	}
	for _, name := range slices.Sorted(maps.Keys(f.Features)) {
		level := f.Features[name]
		if level == 0 {
			continue
		}
		ff := kmsg.NewApiVersionsResponseFinalizedFeature()
		ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = name, level, level
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
	}
	resp.FinalizedFeaturesEpoch = f.Epoch
}

// validSoftwareField checks a KIP-511 client software name or version
// against [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? without a regexp.
func validSoftwareField(s string) bool {
	if s == "" {
		return false
	}
	alnum := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	if !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '.' {
			return false
		}
	}
	return true
}
