package handlers

// UpdateFeatures: v0-1
//
// Behaviour, as a Kafka 3.9 broker in ZooKeeper mode (KafkaApis
// handleUpdateFeatures, KafkaController.validateFeatureUpdate): without
// Alter on the cluster, CLUSTER_AUTHORIZATION_FAILED at the top and no
// results. Otherwise every update is checked against the finalized
// features and the supported ones. Both are empty: KafkaServer uses
// BrokerFeatures.createEmpty, the controller creates /feature with no
// features, and a broker's feature cache refuses any feature it does not
// support (replication/metadata FeatureCache), so Kafka's
// processFeatureUpdates finds nothing to change even once /feature is
// enabled. Each update answers INVALID_REQUEST with Kafka's message and
// nothing is ever written: an empty name, an unknown upgrade type, a
// deletion of a feature that is not finalized, a level below 1 without a
// downgrade, or any other update ("the provided feature is not
// supported"). The answer needs no controller state, so every broker
// gives it itself, the controller's answer (Kafka 3.9's ZooKeeper-mode
// non-controller answers NOT_CONTROLLER at the top; Gregor answers as
// its forwarding to the controller would). ApiVersions shows no supported
// and no finalized features, and /feature's epoch (18_api_versions.go).
//
// Version notes: v0: AllowDowngrade (SAFE_DOWNGRADE when set, else
// UPGRADE).  v1: UpgradeType (1 upgrade, 2 safe, 3 unsafe downgrade;
// anything else unknown) and ValidateOnly (nothing is written either way).

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire"
	"gregor/wire/security/acl"
)

func init() { register(57, 0, 1, handleUpdateFeatures) }

// Kafka's FeatureUpdate.UpgradeType codes.
const (
	upgradeUpgrade         int8 = 1
	upgradeSafeDowngrade   int8 = 2
	upgradeUnsafeDowngrade int8 = 3
)

func handleUpdateFeatures(b *Broker, rc *wire.RequestContext, kreq kmsg.Request) wire.Reply {
	req := kreq.(*kmsg.UpdateFeaturesRequest)
	resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	if !b.authorizeCluster(rc, acl.OpAlter) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return wire.Now(wire.Response{Msg: resp})
	}
	seen := map[string]int{}
	for _, u := range req.FeatureUpdates {
		r := kmsg.NewUpdateFeaturesResponseResult()
		r.Feature = u.Feature
		msg := featureUpdateError(u, req.Version)
		r.ErrorCode, r.ErrorMessage = kerr.InvalidRequest.Code, &msg
		if i, ok := seen[u.Feature]; ok { // one result per feature, the last update's
			resp.Results[i] = r
			continue
		}
		seen[u.Feature] = len(resp.Results)
		resp.Results = append(resp.Results, r)
	}
	return wire.Now(wire.Response{Msg: resp})
}

// featureUpdateError is Kafka's reason for refusing update when no
// feature is finalized or supported (validateFeatureUpdate with no
// existing version, then newFinalizedVersionOrIncompatibilityError).
func featureUpdateError(u kmsg.UpdateFeaturesRequestFeatureUpdate, version int16) string {
	typ := u.UpgradeType
	if version == 0 {
		typ = upgradeUpgrade
		if u.AllowDowngrade {
			typ = upgradeSafeDowngrade
		}
	}
	switch {
	case u.Feature == "":
		return "Feature name can not be empty."
	case typ != upgradeUpgrade && typ != upgradeSafeDowngrade && typ != upgradeUnsafeDowngrade:
		return "Received unknown upgrade type."
	case u.MaxVersionLevel < 1 && typ != upgradeUpgrade: // a deletion
		return "Can not delete non-existing finalized feature."
	case u.MaxVersionLevel < 1:
		return fmt.Sprintf("Can not provide versionLevel: %d less than 1 without setting the SAFE downgradeType in the request.", u.MaxVersionLevel)
	default:
		return "Could not apply finalized feature update because the provided feature is not supported."
	}
}
