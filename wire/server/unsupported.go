package server

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/wire"
)

// unsupportedVersion answers a known API key at a version outside
// Dispatcher.Supported().
//
//   - ApiVersions: a v0 ApiVersionsResponse with UNSUPPORTED_VERSION (35) and
//     our ranges, whatever version was asked (KIP-511), so the client can
//     retry at a version we serve. The body is not parsed: its format at an
//     unknown version is unknown.
//   - any other key: the response type at the requested version with
//     UNSUPPORTED_VERSION in its top-level ErrorCode, when kmsg can encode
//     that version and the response has a top-level ErrorCode. Otherwise the
//     connection is closed with a log line (Kafka does the same): an empty
//     response without an error field would read as success.
func (c *conn) unsupportedVersion(h requestHeader, req kmsg.Request) bool {
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
	resp := req.ResponseKind()
	if h.version < 0 || h.version > resp.MaxVersion() || !setTopLevelErrorCode(resp, kerr.UnsupportedVersion.Code) {
		c.closeWithReason("unsupported API version", zap.Int16("api_key", h.key), zap.Int16("api_version", h.version))
		return false
	}
	resp.SetVersion(h.version)
	c.log.Debug("unsupported API version; answering UNSUPPORTED_VERSION", zap.Int16("api_key", h.key), zap.Int16("api_version", h.version))
	return c.enqueue(&pending{
		key:            h.key,
		version:        h.version,
		correlationID:  h.correlationID,
		flexibleHeader: resp.IsFlexible(),
		reply:          wire.Now(wire.Response{Msg: resp}),
	})
}

// setTopLevelErrorCode sets resp's top-level ErrorCode int16 field, if the
// response type has one.
func setTopLevelErrorCode(resp kmsg.Response, code int16) bool {
	v := reflect.ValueOf(resp)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return false
	}
	f := v.Elem().FieldByName("ErrorCode")
	if !f.IsValid() || f.Kind() != reflect.Int16 || !f.CanSet() {
		return false
	}
	f.SetInt(int64(code))
	return true
}
