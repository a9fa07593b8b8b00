package handlers

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/wire/security"
	"gregor/wire/security/acl"
)

func featureUpdate(name string, level int16, typ int8, allowDowngrade bool) kmsg.UpdateFeaturesRequestFeatureUpdate {
	u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
	u.Feature, u.MaxVersionLevel, u.UpgradeType, u.AllowDowngrade = name, level, typ, allowDowngrade
	return u
}

// Every update is refused with Kafka 3.9 ZooKeeper mode's reason (no
// feature finalized or supported); without cluster Alter the whole
// request is.
func TestUpdateFeaturesZkMode(t *testing.T) {
	b, _ := adminBroker(t, nil)
	req := kmsg.NewPtrUpdateFeaturesRequest()
	req.Version, req.ValidateOnly = 1, false
	req.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{
		featureUpdate("metadata.version", 20, 1, false),
		featureUpdate("", 1, 1, false),
		featureUpdate("group.version", 1, 9, false),
		featureUpdate("transaction.version", 0, 2, false),
		featureUpdate("kraft.version", 0, 1, false),
	}
	resp := call[*kmsg.UpdateFeaturesResponse](t, b, req, "PLAINTEXT")
	want := []string{
		"Could not apply finalized feature update because the provided feature is not supported.",
		"Feature name can not be empty.",
		"Received unknown upgrade type.",
		"Can not delete non-existing finalized feature.",
		"Can not provide versionLevel: 0 less than 1 without setting the SAFE downgradeType in the request.",
	}
	if resp.ErrorCode != 0 || len(resp.Results) != len(want) {
		t.Fatalf("response %+v", resp)
	}
	for i, r := range resp.Results {
		if r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil || *r.ErrorMessage != want[i] {
			t.Errorf("result %d (%q): %d %v, want INVALID_REQUEST %q", i, r.Feature, r.ErrorCode, strPtr(r.ErrorMessage), want[i])
		}
	}
	// v0: AllowDowngrade with level 0 is a deletion.
	req0 := kmsg.NewPtrUpdateFeaturesRequest()
	req0.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{featureUpdate("x", 0, 0, true)}
	if r := call[*kmsg.UpdateFeaturesResponse](t, b, req0, "PLAINTEXT"); len(r.Results) != 1 || *r.Results[0].ErrorMessage != "Can not delete non-existing finalized feature." {
		t.Fatalf("v0 %+v", r.Results)
	}

	b.Authorizer = acl.NewAuthorizer(acl.Config{}, nil)
	r := groupCallAs[*kmsg.UpdateFeaturesResponse](t, b, security.User("bob"), req)
	if r.ErrorCode != kerr.ClusterAuthorizationFailed.Code || len(r.Results) != 0 {
		t.Fatalf("without cluster Alter: %+v", r)
	}
}

func strPtr(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
