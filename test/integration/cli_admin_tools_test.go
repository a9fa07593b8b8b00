package integration

// kafka-delete-records.sh, kafka-get-offsets.sh, kafka-broker-api-versions.sh
// and kafka-log-dirs.sh against a real broker (issue 15, points 4 and 6).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/test/harness"
)

// writeFile writes content to a new file in t's temp dir.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCLIDeleteRecordsAndGetOffsets(t *testing.T) {
	b := harness.StartBroker(t, nil)
	bs := b.Addr()
	createTopic(t, b, "dr", 2, nil)
	harness.ProduceInputs(t, []string{bs}, "dr", 40)
	// Keys spread the 40 records over both partitions; read each end.
	code, out, errs := cliRun(t, nil, "kafka-get-offsets.sh", "--bootstrap-server", bs, "--topic", "dr")
	m := regexp.MustCompile(`^dr:0:(\d+)\ndr:1:(\d+)\n$`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("get-offsets latest: %d %q %q", code, out, errs)
	}
	var end0, end1 int64
	fmt.Sscan(m[1], &end0)
	fmt.Sscan(m[2], &end1)
	if end0+end1 != 40 || end0 < 6 || end1 < 1 {
		t.Fatalf("ends %d+%d", end0, end1)
	}

	plan := writeFile(t, "offsets.json", `{"partitions":[{"topic":"dr","partition":0,"offset":5},{"topic":"dr","partition":1,"offset":-1},{"topic":"dr","partition":7,"offset":1}],"version":1}`)
	code, out, errs = cliRun(t, nil, "kafka-delete-records.sh", "--bootstrap-server", bs, "--offset-json-file", plan)
	want := fmt.Sprintf("Executing records delete operation\nRecords delete operation completed:\n"+
		"partition: dr-0\tlow_watermark: 5\npartition: dr-1\tlow_watermark: %d\n"+
		"partition: dr-7\terror: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.\n", end1)
	if code != 0 || out != want {
		t.Fatalf("delete-records: %d\n%s\nwant\n%s\nstderr %q", code, out, want, errs)
	}
	// Earliest now shows the new low watermarks; -2 is the same spec.
	for _, spec := range []string{"earliest", "-2", "earliest-local"} {
		code, out, errs = cliRun(t, nil, "kafka-get-offsets.sh", "--broker-list", bs, "--topic-partitions", "d.*:0-2", "--time", spec)
		if want := fmt.Sprintf("dr:0:5\ndr:1:%d\n", end1); code != 0 || out != want {
			t.Fatalf("get-offsets %s: %d %q want %q; %q", spec, code, out, want, errs)
		}
	}
	// max-timestamp: the record with the largest timestamp (offset 1 of 3).
	createTopic(t, b, "mt", 1, nil)
	cl := b.Client()
	now := time.Now()
	for i, ts := range []time.Time{now, now.Add(time.Hour), now.Add(time.Minute)} {
		r := &kgo.Record{Topic: "mt", Value: []byte{byte(i)}, Timestamp: ts}
		if err := cl.ProduceSync(ctxFor(t, 20*time.Second), r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	code, out, _ = cliRun(t, nil, "kafka-get-offsets.sh", "--bootstrap-server", bs, "--topic", "mt", "--partitions", "0", "--time", "max-timestamp")
	if code != 0 || out != "mt:0:1\n" {
		t.Fatalf("max-timestamp: %d %q", code, out)
	}
	// A timestamp lookup: the first record at or after now+1s.
	code, out, _ = cliRun(t, nil, "kafka-get-offsets.sh", "--bootstrap-server", bs, "--topic", "mt", "--time", fmt.Sprint(now.Add(time.Second).UnixMilli()))
	if code != 0 || out != "mt:0:1\n" {
		t.Fatalf("timestamp: %d %q", code, out)
	}
	code, out, _ = cliRun(t, nil, "kafka-get-offsets.sh", "--bootstrap-server", bs, "--topic", "dr", "--time", "latest-tiered")
	if code != 0 || out != "" {
		t.Fatalf("latest-tiered: %d %q", code, out)
	}
	// A timestamp far in the future matches nothing: no line.
	code, out, _ = cliRun(t, nil, "kafka-get-offsets.sh", "--bootstrap-server", bs, "--topic-partitions", "dr:1", "--time", fmt.Sprint(time.Now().Add(2*time.Hour).UnixMilli()))
	if code != 0 || out != "" {
		t.Fatalf("future timestamp: %d %q", code, out)
	}
	// kafka-run-class.sh kafka.tools.GetOffsetShell is the same tool.
	code, out, _ = cliRun(t, nil, "kafka-run-class.sh", "kafka.tools.GetOffsetShell", "--bootstrap-server", bs, "--topic", "dr", "--partitions", "0", "--time", "-2")
	if code != 0 || out != "dr:0:5\n" {
		t.Fatalf("run-class GetOffsetShell: %d %q", code, out)
	}
	// Internal topics are listed unless excluded.
	code, out, _ = cliRun(t, nil, "kafka-get-offsets.sh", "--bootstrap-server", bs, "--topic-partitions", "__consumer_offsets:0", "--exclude-internal-topics")
	if code != 1 {
		t.Fatalf("excluded internal: %d %q", code, out)
	}

	// Bad input.
	for _, c := range []struct {
		script string
		args   []string
		want   string
	}{
		{"kafka-get-offsets.sh", []string{"--topic", "dr"}, `Missing required argument "[bootstrap-server]"`},
		{"kafka-get-offsets.sh", []string{"--bootstrap-server", bs, "--time", "yesterday"}, "Error occurred: Malformed time argument yesterday."},
		{"kafka-get-offsets.sh", []string{"--bootstrap-server", bs, "--topic", "dr", "--topic-partitions", "dr:0"}, "Error occurred: --topic-partitions cannot be used with --topic or --partitions"},
		{"kafka-get-offsets.sh", []string{"--bootstrap-server", bs, "--partitions", "a"}, "Error occurred: --partitions expects a comma separated list of numeric partition ids, but received: a"},
		{"kafka-get-offsets.sh", []string{"--bootstrap-server", bs, "--topic-partitions", "dr:x"}, "Error occurred: Invalid rule specification: dr:x"},
		{"kafka-get-offsets.sh", []string{"--bootstrap-server", bs, "--topic", "nosuch"}, "Error occurred: Could not match any topic-partitions with the specified filters"},
		{"kafka-delete-records.sh", []string{"--offset-json-file", plan}, `Missing required argument "[bootstrap-server]"`},
		{"kafka-delete-records.sh", []string{"--bootstrap-server", bs}, `Missing required argument "[offset-json-file]"`},
		{"kafka-delete-records.sh", []string{"--bootstrap-server", bs, "--offset-json-file", writeFile(t, "bad.json", "{nope")}, "The input string is not a valid JSON"},
		{"kafka-delete-records.sh", []string{"--bootstrap-server", bs, "--offset-json-file", writeFile(t, "v2.json", `{"version":2,"partitions":[]}`)}, "Not supported version field value 2"},
		{"kafka-delete-records.sh", []string{"--bootstrap-server", bs, "--offset-json-file", writeFile(t, "nop.json", `{"version":1}`)}, "Missing partitions field"},
		{"kafka-delete-records.sh", []string{"--bootstrap-server", bs, "--offset-json-file", writeFile(t, "dup.json", `{"partitions":[{"topic":"dr","partition":0,"offset":1},{"topic":"dr","partition":0,"offset":2}]}`)}, "Offset json file contains duplicate topic partitions: dr-0"},
		{"kafka-delete-records.sh", []string{"--bootstrap-server", bs, "--offset-json-file", writeFile(t, "str.json", `{"partitions":[{"topic":"dr","partition":"0","offset":1}]}`)}, "Expected `Integer` value, received \"0\""},
	} {
		code, out, errs := cliRun(t, nil, c.script, c.args...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s %v: exit %d out %q err %q, want %q", c.script, c.args, code, out, errs, c.want)
		}
	}
	// Nothing was deleted by the failed runs.
	code, out, _ = cliRun(t, nil, "kafka-get-offsets.sh", "--bootstrap-server", bs, "--topic", "dr", "--partitions", "0", "--time", "earliest")
	if code != 0 || out != "dr:0:5\n" {
		t.Fatalf("after bad runs: %d %q", code, out)
	}
}

func TestCLIBrokerApiVersions(t *testing.T) {
	b := harness.StartBroker(t, nil)
	code, out, errs := cliRun(t, nil, "kafka-broker-api-versions.sh", "--bootstrap-server", b.Addr())
	if code != 0 {
		t.Fatalf("%d %q", code, errs)
	}
	head := fmt.Sprintf("127.0.0.1:%d (id: 0 rack: null) -> (\n\t", b.Port)
	if !strings.HasPrefix(out, head) || !strings.HasSuffix(out, "\n)\n") {
		t.Fatalf("output:\n%s", out)
	}
	lines := strings.Split(strings.TrimSuffix(strings.TrimPrefix(out, head), "\n)\n"), ",\n\t")
	cl := b.Client()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctxFor(t, 10*time.Second), cl)
	if err != nil {
		t.Fatal(err)
	}
	served := map[int16]kmsg.ApiVersionsResponseApiKey{}
	for _, k := range resp.ApiKeys {
		served[k.ApiKey] = k
	}
	seen := map[int16]bool{}
	line := regexp.MustCompile(`^([A-Za-z]+)\((\d+)\): (?:UNSUPPORTED|(\d+)(?: to (\d+))? \[usable: (\d+)\])$`)
	for _, l := range lines {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %q", l)
		}
		var key int16
		fmt.Sscan(m[2], &key)
		seen[key] = true
		k, ok := served[key]
		if m[3] == "" {
			if ok {
				t.Errorf("%q but the broker serves %d-%d", l, k.MinVersion, k.MaxVersion)
			}
			continue
		}
		want := fmt.Sprintf("%d to %d", k.MinVersion, k.MaxVersion)
		if k.MinVersion == k.MaxVersion {
			want = fmt.Sprint(k.MinVersion)
		}
		usable := min(k.MaxVersion, kmsg.RequestForKey(key).MaxVersion())
		if !ok || !strings.Contains(l, "): "+want+" [usable: "+fmt.Sprint(usable)+"]") {
			t.Errorf("%q, broker serves %+v", l, k)
		}
	}
	for key := range served {
		if !seen[key] {
			t.Errorf("served key %d not printed", key)
		}
	}
	for _, want := range []string{"\tProduce(0): ", "\tLeaderAndIsr(4): ", "\tDescribeLogDirs(35): 0 to 4 [usable: 4]", "\tAddRaftVoter(80): UNSUPPORTED"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(out, "Vote(52)") { // a KRaft controller's API, not a client's
		t.Errorf("controller-only API listed")
	}
	code, _, errs = cliRun(t, nil, "kafka-broker-api-versions.sh")
	if code != 1 || errs != "Missing required argument \"[bootstrap-server]\"\n" {
		t.Errorf("no flags: %d %q", code, errs)
	}
}

func TestCLILogDirs(t *testing.T) {
	b := harness.StartBroker(t, nil)
	bs := b.Addr()
	createTopic(t, b, "ld", 1, nil)
	createTopic(t, b, "other", 1, nil)
	harness.ProduceInputs(t, []string{bs}, "ld", 10)
	code, out, errs := cliRun(t, nil, "kafka-log-dirs.sh", "--bootstrap-server", bs, "--describe", "--topic-list", "ld", "--broker-list", "0")
	lines := strings.Split(out, "\n")
	if code != 0 || len(lines) != 4 || lines[0] != "Querying brokers for log directories information" ||
		lines[1] != "Received log directory information from brokers 0" || lines[3] != "" {
		t.Fatalf("%d %q %q", code, out, errs)
	}
	var doc struct {
		Version int `json:"version"`
		Brokers []struct {
			Broker  int `json:"broker"`
			LogDirs []struct {
				LogDir     string  `json:"logDir"`
				Error      *string `json:"error"`
				Partitions []struct {
					Partition string `json:"partition"`
					Size      int64  `json:"size"`
					OffsetLag int64  `json:"offsetLag"`
					IsFuture  bool   `json:"isFuture"`
				} `json:"partitions"`
			} `json:"logDirs"`
		} `json:"brokers"`
	}
	if err := json.Unmarshal([]byte(lines[2]), &doc); err != nil {
		t.Fatalf("%v: %s", err, lines[2])
	}
	if !strings.HasPrefix(lines[2], `{"brokers":[{"broker":0,"logDirs":[{"partitions":[{"partition":"ld-0","size":`) {
		t.Errorf("key order: %s", lines[2])
	}
	if doc.Version != 1 || len(doc.Brokers) != 1 || len(doc.Brokers[0].LogDirs) != 1 {
		t.Fatalf("doc %+v", doc)
	}
	d := doc.Brokers[0].LogDirs[0]
	seg, err := os.Stat(filepath.Join(b.DataDir, "ld-0", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	if d.LogDir != b.DataDir || d.Error != nil || len(d.Partitions) != 1 || d.Partitions[0].Partition != "ld-0" ||
		d.Partitions[0].Size != seg.Size() || d.Partitions[0].Size <= 0 || d.Partitions[0].OffsetLag != 0 || d.Partitions[0].IsFuture {
		t.Fatalf("dir %+v, segment %d bytes", d, seg.Size())
	}
	// kafka-delete-records.sh to offset 1, then to the log end: the one
	// segment is the active one and, as in Kafka, stays with its bytes
	// (a segment goes only once a later segment starts at or below the
	// log start offset), so the size is the same.
	for _, off := range []int{1, 10} {
		plan := writeFile(t, "del.json", fmt.Sprintf(`{"partitions":[{"topic":"ld","partition":0,"offset":%d}],"version":1}`, off))
		if code, out, errs := cliRun(t, nil, "kafka-delete-records.sh", "--bootstrap-server", bs, "--offset-json-file", plan); code != 0 || !strings.Contains(out, fmt.Sprintf("partition: ld-0\tlow_watermark: %d", off)) {
			t.Fatalf("delete-records to %d: %d %q %q", off, code, out, errs)
		}
		code, out, errs = cliRun(t, nil, "kafka-log-dirs.sh", "--bootstrap-server", bs, "--describe", "--topic-list", "ld")
		if want := fmt.Sprintf(`{"partitions":[{"partition":"ld-0","size":%d,"offsetLag":0,"isFuture":false}]`, seg.Size()); code != 0 || !strings.Contains(out, want) {
			t.Fatalf("log-dirs after delete-records to %d: %d %q %q, want %s", off, code, out, errs, want)
		}
		if now, err := os.Stat(filepath.Join(b.DataDir, "ld-0", "00000000000000000000.log")); err != nil || now.Size() != seg.Size() {
			t.Fatalf("after delete-records to %d the segment is %v %v", off, now, err)
		}
	}
	// Without --topic-list every partition is listed.
	code, out, _ = cliRun(t, nil, "kafka-log-dirs.sh", "--bootstrap-server", bs, "--describe")
	if code != 0 || !strings.Contains(out, `"partition":"ld-0"`) || !strings.Contains(out, `"partition":"other-0"`) {
		t.Fatalf("all: %d %q", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bootstrap-server", bs}, "Missing required argument \"[describe]\"\n"},
		{[]string{"--describe"}, "Missing required argument \"[bootstrap-server]\"\n"},
		{[]string{"--bootstrap-server", bs, "--describe", "--broker-list", "0,5"}, "ERROR: The given brokers do not exist from --broker-list: 5. Current existent brokers: 0\n"},
	} {
		code, out, errs := cliRun(t, nil, "kafka-log-dirs.sh", c.args...)
		if code != 1 || errs != c.want || out != "" {
			t.Errorf("%v: %d %q %q", c.args, code, out, errs)
		}
	}
}
