package integration

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

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
