package consumergroups

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// --export's two CSV forms and --from-file reading them back.
func TestExportCSVRoundTrip(t *testing.T) {
	plan := []plannedOffset{
		{"g1", kadm.Offset{Topic: "t", Partition: 0, At: 4}},
		{`odd,"g"`, kadm.Offset{Topic: "t", Partition: 1, At: 7}},
	}
	multi := exportCSV(plan, false)
	if multi != "g1,t,0,4\n\"odd,\"\"g\"\"\",t,1,7\n" {
		t.Fatalf("multi-group CSV = %q", multi)
	}
	if single := exportCSV(plan[:1], true); single != "t,0,4\n" {
		t.Fatalf("single-group CSV = %q", single)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "p.csv")
	if err := os.WriteFile(path, []byte(multi), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readResetPlan(path, false, nil)
	want := map[string][]kadm.Offset{
		"g1":      {{Topic: "t", Partition: 0, At: 4, LeaderEpoch: -1}},
		`odd,"g"`: {{Topic: "t", Partition: 1, At: 7, LeaderEpoch: -1}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read multi = %v, %v", got, err)
	}
	// One --group and the group-less form: every line is that group's.
	if err := os.WriteFile(path, []byte("t,0,4\nt,2,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = readResetPlan(path, true, []string{"only"})
	if err != nil || len(got["only"]) != 2 || got["only"][1].Partition != 2 {
		t.Fatalf("read single = %v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte("t,zero,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readResetPlan(path, true, []string{"only"}); err == nil {
		t.Fatal("a non-numeric partition was accepted")
	}
}
