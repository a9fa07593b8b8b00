package topicconfig

import (
	"sort"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/config"
)

func TestTableCoversConfigPackage(t *testing.T) {
	if !sort.SliceIsSorted(Keys, func(i, j int) bool { return Keys[i].Name < Keys[j].Name }) {
		t.Fatal("Keys not sorted by name")
	}
	for _, ck := range config.TopicConfigKeys() {
		k := Lookup(ck.Name)
		if k == nil || k.Type == kmsg.ConfigTypeUnknown || k.Doc == "" {
			t.Errorf("%s: no type/doc", ck.Name)
		}
	}
	if Lookup("cleanup.policy").Type != kmsg.ConfigTypeList || Lookup("retention.ms").Type != kmsg.ConfigTypeLong {
		t.Fatal("types")
	}
}
