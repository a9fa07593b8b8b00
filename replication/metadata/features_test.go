package metadata

import (
	"strings"
	"testing"
)

// TestFeatureCacheAsZkMetadataCache: none (epoch -1) before anything;
// an enabled node's empty features at its version; metadata.version is
// dropped, not refused; an unsupported feature and an older epoch are
// refused with Kafka's reason and the cache keeps what it had; Clear
// goes back to epoch -1.
func TestFeatureCacheAsZkMetadataCache(t *testing.T) {
	var nilCache *FeatureCache
	if f := nilCache.Load(); f.Epoch != -1 || len(f.Features) != 0 {
		t.Fatalf("nil cache: %v", f)
	}
	c := &FeatureCache{}
	if f := c.Load(); f.Epoch != -1 || len(f.Features) != 0 {
		t.Fatalf("new cache: %v", f)
	}
	if err := c.Update(map[string]int16{}, 3); err != nil {
		t.Fatal(err)
	}
	if f := c.Load(); f.Epoch != 3 || len(f.Features) != 0 {
		t.Fatalf("after update: %v", f)
	}
	if err := c.Update(map[string]int16{MetadataVersionFeature: 21}, 4); err != nil {
		t.Fatalf("metadata.version refused: %v", err)
	}
	if f := c.Load(); f.Epoch != 4 || len(f.Features) != 0 {
		t.Fatalf("metadata.version kept: %v", f)
	}
	err := c.Update(map[string]int16{"transaction.version": 2}, 5)
	if err == nil || !strings.Contains(err.Error(), "feature compatibility checks failed") || !strings.Contains(err.Error(), "{feature=transaction.version, reason='Unsupported feature'}") {
		t.Fatalf("unsupported feature: %v", err)
	}
	if f := c.Load(); f.Epoch != 4 || len(f.Features) != 0 {
		t.Fatalf("refused update changed the cache: %v", f)
	}
	if err := c.Update(map[string]int16{}, 2); err == nil || !strings.Contains(err.Error(), "invalid epoch") {
		t.Fatalf("older epoch: %v", err)
	}
	if err := c.Update(map[string]int16{}, 4); err != nil {
		t.Fatalf("same epoch: %v", err)
	}
	c.Clear()
	if f := c.Load(); f.Epoch != -1 || len(f.Features) != 0 {
		t.Fatalf("after clear: %v", f)
	}
	if err := c.Update(map[string]int16{}, 0); err != nil { // a re-created node starts over
		t.Fatalf("after clear: %v", err)
	}
}
