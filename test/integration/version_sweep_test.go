package integration

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"gregor/storage/record"
	"gregor/test/harness"
)

// TestUnsupportedVersionSweep: every API key kmsg knows, at every version
// below the minimum and above the maximum the broker advertises (all of a
// key's versions when it is not advertised), gets what Kafka does: for
// ApiVersions a v0 answer with UNSUPPORTED_VERSION and the broker's ranges,
// for every other key a closed connection and not one byte of response —
// never an answer that could decode as success.
func TestUnsupportedVersionSweep(t *testing.T) {
	b := harness.StartBroker(t, nil)
	ranges := map[int16][2]int16{}
	{
		c, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = 3
		req.ClientSoftwareName, req.ClientSoftwareVersion = "sweep", "1"
		resp := roundTripRaw(t, c, req, 7).(*kmsg.ApiVersionsResponse)
		c.Close()
		for _, k := range resp.ApiKeys {
			ranges[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
		}
	}
	if len(ranges) < 40 {
		t.Fatalf("broker advertises %d keys; want the whole served set", len(ranges))
	}
	var probes, answered, closed int
	for key := int16(0); key < 100; key++ {
		req := kmsg.RequestForKey(key)
		if req == nil {
			continue
		}
		var versions []int16
		if r, ok := ranges[key]; ok {
			for v := int16(0); v < r[0]; v++ {
				versions = append(versions, v)
			}
			for v := r[1] + 1; v <= r[1]+2; v++ {
				versions = append(versions, v)
			}
		} else {
			for v := int16(0); v <= req.MaxVersion()+1; v++ {
				versions = append(versions, v)
			}
		}
		for _, v := range versions {
			probes++
			got := probeVersion(t, b.Addr(), key, v)
			switch {
			case key == 18:
				av, ok := got.(*kmsg.ApiVersionsResponse)
				if !ok || av.ErrorCode != kerr.UnsupportedVersion.Code || len(av.ApiKeys) != len(ranges) {
					t.Errorf("ApiVersions v%d: got %v; want a v0 UNSUPPORTED_VERSION answer with %d ranges", v, got, len(ranges))
				}
				answered++
			case got != nil:
				t.Errorf("key %d (%s) v%d: answered %v; want the connection closed", key, kmsg.NameForKey(key), v, got)
			default:
				closed++
			}
		}
	}
	t.Logf("%d probes: %d ApiVersions answers, %d connections closed", probes, answered, closed)
	if closed < 100 {
		t.Fatalf("only %d probes closed; the sweep did not cover the keys", closed)
	}
	// The broker still serves.
	c, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 4
	roundTripRaw(t, c, md, 9)
}

// probeVersion sends one request header (key, version, correlation id 42,
// client id) with no body on a new connection. It returns the decoded
// ApiVersions v0 answer, a non-nil placeholder for any other bytes, or nil
// when the broker closed the connection without answering.
func probeVersion(t *testing.T, addr string, key, version int16) any {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := binary.BigEndian.AppendUint16(nil, uint16(key))
	body = binary.BigEndian.AppendUint16(body, uint16(version))
	body = binary.BigEndian.AppendUint32(body, 42)
	body = binary.BigEndian.AppendUint16(body, 5)
	body = append(body, "sweep"...)
	body = append(body, 0) // an empty tagged-field section, should the version be flexible
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	if _, err := c.Write(append(frame, body...)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("key %d v%d: neither answered nor closed in 10 s", key, version)
		}
		return nil
	}
	buf := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatalf("key %d v%d: truncated answer: %v", key, version, err)
	}
	if key != 18 || len(buf) < 4 || binary.BigEndian.Uint32(buf) != 42 {
		return buf
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	if err := resp.ReadFrom(buf[4:]); err != nil {
		return buf
	}
	return resp
}

// roundTripRaw writes req with correlation id corr and reads its response.
func roundTripRaw(t *testing.T, c net.Conn, req kmsg.Request, corr int32) kmsg.Response {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(kmsg.NewRequestFormatter(kmsg.FormatterClientID("sweep")).AppendRequest(nil, req, corr)); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	body := buf[4:]
	if resp.IsFlexible() && req.Key() != 18 {
		body = body[1:] // response header tagged fields
	}
	if err := resp.ReadFrom(body); err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestProduceAcksZeroSendsNothing: a Produce with acks=0 gets no response
// (the next response on the connection is the next request's), and one
// that fails (an unknown topic) closes the connection, as Kafka does, so
// the producer notices. A response to acks=0 once desynchronised
// pipelining clients: kafka-go, which reads no response for it, decoded
// the stray Produce answer as its next request's and failed.
func TestProduceAcksZeroSendsNothing(t *testing.T) {
	b := harness.StartBroker(t, nil)
	createTopic(t, b, "zero", 1, nil)
	produce := func(topic string) *kmsg.ProduceRequest {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 8, 0, 5000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = oneBatch(t)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return req
	}
	c, err := net.DialTimeout("tcp", b.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("zero"))
	for corr := int32(1); corr <= 3; corr++ {
		if _, err := c.Write(f.AppendRequest(nil, produce("zero"), corr)); err != nil {
			t.Fatal(err)
		}
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 4
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(f.AppendRequest(nil, md, 4)); err != nil {
		t.Fatal(err)
	}
	var hdr [8]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		t.Fatal(err)
	}
	if corr := int32(binary.BigEndian.Uint32(hdr[4:])); corr != 4 {
		t.Fatalf("first response has correlation id %d; want 4 (Metadata): acks=0 was answered", corr)
	}
	if _, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(hdr[:4]))-4); err != nil {
		t.Fatal(err)
	}
	// A failing acks=0 produce closes the connection, without a response.
	if _, err := c.Write(f.AppendRequest(nil, produce("no-such-topic"), 5)); err != nil {
		t.Fatal(err)
	}
	n, err := c.Read(hdr[:])
	var ne net.Error
	if n != 0 || err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("after a failed acks=0 produce: read %d bytes, %v; want the connection closed", n, err)
	}
	if !strings.Contains(b.Log(), "Closing connection due to error during produce request with ack=0") {
		t.Error("the close was not logged")
	}
	// The records of the good requests were appended.
	cl := b.Client()
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(t.Context(), "zero")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := ends.Lookup("zero", 0); o.Offset != 3 {
		t.Fatalf("end offset %d; want the 3 acks=0 records", o.Offset)
	}
}

// oneBatch is a v2 record batch of one record, as a producer without an
// idempotent id writes it.
func oneBatch(t *testing.T) []byte {
	t.Helper()
	b, err := record.BuildBatch(record.BatchOptions{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli()},
		[]record.BatchRecord{{Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
