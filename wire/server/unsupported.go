package server

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/wire"
)

// unsupportedVersion answers a known API key at a version outside
// Dispatcher.Supported(), as Kafka's request parsing does:
//
//   - ApiVersions: a v0 ApiVersionsResponse with UNSUPPORTED_VERSION (35) and
//     our ranges, whatever version was asked (KIP-511), so the client can
//     retry at a version we serve. The body is not parsed: its format at an
//     unknown version is unknown.
//   - any other key: the connection is closed with a log line. No response
//     is safe: an error code written into a field the requested version does
//     not encode (Fetch's top-level ErrorCode exists from v7 only) would
//     decode as an empty success.
func (c *conn) unsupportedVersion(h requestHeader) bool {
	if h.key == 18 {
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		for _, r := range c.s.ranges {
			k := kmsg.NewApiVersionsResponseApiKey()
			k.ApiKey, k.MinVersion, k.MaxVersion = r.Key, r.MinVersion, r.MaxVersion
			resp.ApiKeys = append(resp.ApiKeys, k)
		}
		c.log.Debug("ApiVersions at an unsupported version; answering v0", zap.Int16("api_version", h.version))
		return c.enqueue(&pending{key: 18, version: 0, correlationID: h.correlationID, reply: wire.Now(wire.Response{Msg: resp})})
	}
	c.closeWithReason("unsupported API version", zap.Int16("api_key", h.key), zap.Int16("api_version", h.version))
	return false
}
