package server

import (
	"fmt"
	"reflect"
	"runtime/debug"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"go.uber.org/zap"

	"gregor/wire"
	"gregor/wire/security"
	"gregor/wire/security/sasl"
)

// SASL authentication on SASL_PLAINTEXT and SASL_SSL listeners, as Kafka's
// SaslServerAuthenticator: until a connection has authenticated, only
// ApiVersions (once, first), SaslHandshake (key 17, v0–1) and
// SaslAuthenticate (key 36, v0–2) are accepted; anything else closes the
// connection. A v0 SaslHandshake means the tokens that follow are raw
// 4-byte-length-prefixed SASL tokens without Kafka headers (pre-KIP-152
// clients); v1 means they come in SaslAuthenticate requests. A failed
// exchange is answered (SASL_AUTHENTICATION_FAILED with Kafka's message
// in SaslAuthenticate; UNSUPPORTED_SASL_MECHANISM in SaslHandshake) and
// the connection closed (KIP-152). KIP-368: with connections.max.reauth.ms
// the session ends after that long; the client re-authenticates with a new
// SaslHandshake + SaslAuthenticate on the live connection (same principal,
// same mechanism), and a request on an expired session closes the
// connection. All of it runs on the connection's reader goroutine: the
// mechanisms compute in memory and never wait on the network.

// DefaultSASLHandshakeTimeout bounds how long a connection may take to
// authenticate (and to re-authenticate). Kafka has no such bound (only
// connections.max.idle.ms, which a client that trickles bytes never
// hits); Gregor drops a connection that has not completed SASL
// authentication within this time of its start (or of its
// re-authentication's start).
const DefaultSASLHandshakeTimeout = 30 * time.Second

// minReauthInterval: a re-authentication may start at most once a second
// (KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS); a SaslHandshake
// sooner is handled as after authentication (ILLEGAL_SASL_STATE).
const minReauthInterval = time.Second

// SASLListener is the SASL side of a listener's security (set on
// SASL_PLAINTEXT and SASL_SSL listeners).
type SASLListener struct {
	// Auth makes the mechanisms' sessions (enabled mechanisms, PLAIN
	// users, SCRAM credential cache).
	Auth *sasl.Authenticator
	// MaxReauth is connections.max.reauth.ms by mechanism (the listener
	// and mechanism prefixed key first); 0 or absent = sessions never
	// expire and SaslAuthenticate answers session_lifetime_ms 0.
	MaxReauth map[string]time.Duration
	// HandshakeTimeout bounds authentication (0 = DefaultSASLHandshakeTimeout).
	HandshakeTimeout time.Duration
	// MaxReceiveSize is sasl.server.max.receive.size: the largest frame
	// before and during the initial authentication (a bigger one closes
	// the connection). 0 = 524288.
	MaxReceiveSize int32
}

// AuthObserver hears of every completed or failed SASL authentication
// (the admin listener counts them per listener:
// kafka_server_socket_server_metrics_{successful,failed}_authentication_total
// and the re-authentication counterparts).
type AuthObserver interface {
	AuthenticationDone(listener, mechanism string, reauth, ok bool)
}

type saslState int

const (
	saslInitial      saslState = iota // ApiVersions or SaslHandshake expected
	saslHandshake                     // after ApiVersions: SaslHandshake expected
	saslAuthenticate                  // tokens of the chosen mechanism expected
	saslComplete                      // authenticated
)

// saslConn is one connection's SASL state; the reader goroutine owns it.
type saslConn struct {
	cfg      *SASLListener
	state    saslState
	raw      bool // SaslHandshake v0: tokens are raw frames
	mech     string
	sess     sasl.Session
	badMech  string    // re-authentication asked for another mechanism: fail with this
	deadline time.Time // authentication must complete by then
	expires  time.Time // session end (KIP-368); zero = never

	reauth      bool // the exchange in progress is a re-authentication
	reauthStart time.Time
	prevPrinc   security.Principal
}

// newSASLConn returns the SASL state of a connection on listener ls, nil
// when the listener does not authenticate with SASL.
func newSASLConn(ls ListenerSecurity) *saslConn {
	if !ls.Protocol.UsesSASL() {
		return nil
	}
	cfg := ls.SASL
	if cfg == nil || cfg.Auth == nil {
		cfg = &SASLListener{Auth: &sasl.Authenticator{}}
	}
	sc := &saslConn{cfg: cfg}
	sc.deadline = time.Now().Add(sc.timeout())
	return sc
}

func (sc *saslConn) timeout() time.Duration {
	if sc.cfg.HandshakeTimeout > 0 {
		return sc.cfg.HandshakeTimeout
	}
	return DefaultSASLHandshakeTimeout
}

// setReadDeadline arms the next read's deadline: the idle timeout, or the
// authentication deadline if that comes first.
func (c *conn) setReadDeadline(idle time.Duration) {
	var d time.Time
	if idle > 0 {
		d = time.Now().Add(idle)
	}
	if sc := c.sasl; sc != nil && sc.state != saslComplete && (d.IsZero() || sc.deadline.Before(d)) {
		d = sc.deadline
	}
	if !d.IsZero() {
		c.nc.SetReadDeadline(d)
	}
}

// maxFrame is the largest frame the connection may send now, and the
// config key that sets it: sasl.server.max.receive.size until the
// connection first authenticated, else socket.request.max.bytes.
func (c *conn) maxFrame() (int32, string) {
	if sc := c.sasl; sc != nil && sc.state != saslComplete && !sc.reauth {
		n := sc.cfg.MaxReceiveSize
		if n <= 0 {
			n = 524288
		}
		return min(n, c.s.cfg.SocketRequestMaxBytes), "sasl.server.max.receive.size"
	}
	return c.s.cfg.SocketRequestMaxBytes, "socket.request.max.bytes"
}

// saslStalled reports (after a read deadline passed) whether the reason
// is an authentication that did not complete in time; it then closes the
// connection.
func (c *conn) saslStalled() bool {
	sc := c.sasl
	if sc == nil || sc.state == saslComplete || time.Now().Before(sc.deadline) {
		return false
	}
	c.authDone(false)
	c.closeWithReason(fmt.Sprintf("SASL %s not completed within %v", sc.what(), sc.timeout()))
	return true
}

func (sc *saslConn) what() string {
	if sc.reauth {
		return "re-authentication"
	}
	return "authentication"
}

func (c *conn) authDone(ok bool) {
	if o := c.s.Auth; o != nil {
		o.AuthenticationDone(c.listener, c.sasl.mech, c.sasl.reauth, ok)
	}
}

// saslGate runs before a frame is dispatched on a SASL listener. dispatch:
// hand the frame to the dispatcher as usual. keep: read the next frame
// (false: stop reading; the writer sends what is queued, then the
// connection closes; a connection closed at once was aborted here).
// A panic in a mechanism is recovered here and closes only this
// connection, as handleFrame does for handlers.
func (c *conn) saslGate(frame []byte) (dispatch, keep bool) {
	defer func() {
		if v := recover(); v != nil {
			c.log.Error("panic during SASL authentication; closing connection", zap.Any("panic", v), zap.ByteString("stack", debug.Stack()))
			c.abort()
			dispatch, keep = false, false
		}
	}()
	sc := c.sasl
	if sc.raw && sc.state == saslAuthenticate {
		return false, c.saslRawToken(frame)
	}
	h, rest, err := parseFixedHeader(frame)
	if err != nil {
		c.closeWithReason("malformed request header during SASL authentication", zap.Error(err))
		return false, false
	}
	switch sc.state {
	case saslComplete:
		now := time.Now()
		if h.key == 17 && !sc.expires.IsZero() && now.Sub(sc.reauthStart) >= minReauthInterval {
			// KIP-368: a SaslHandshake on an authenticated connection with a
			// session lifetime begins re-authentication.
			sc.reauth, sc.reauthStart, sc.prevPrinc = true, now, c.principal
			sc.deadline = now.Add(sc.timeout())
			return false, c.saslHandshake(h, rest)
		}
		if !sc.expires.IsZero() && now.After(sc.expires) {
			c.closeWithReason("SASL session expired (connections.max.reauth.ms) and the client did not re-authenticate",
				zap.Int16("api_key", h.key))
			return false, false
		}
		return true, true
	case saslInitial:
		switch h.key {
		case 18:
			// Answered by the dispatcher (or, at a version we do not serve,
			// with UNSUPPORTED_VERSION: the client may then ask again at
			// another version, as Kafka allows).
			if c.s.supports(h.key, h.version) {
				sc.state = saslHandshake
			}
			return true, true
		case 17:
			return false, c.saslHandshake(h, rest)
		}
		c.authDone(false)
		c.failAuthentication(fmt.Sprintf("Unexpected Kafka request of type %s during SASL handshake.", apiName(h.key)))
		return false, false
	case saslHandshake:
		if h.key == 17 {
			return false, c.saslHandshake(h, rest)
		}
		c.authDone(false)
		c.failAuthentication(fmt.Sprintf("Unexpected Kafka request of type %s during SASL handshake.", apiName(h.key)))
		return false, false
	default: // saslAuthenticate, v1 headers
		if h.key == 36 {
			return false, c.saslAuthenticate(h, rest)
		}
		return false, c.saslUnexpected(h, rest)
	}
}

// apiName is the API's name as Kafka's ApiKeys prints it (e.g. METADATA).
func apiName(key int16) string {
	if n := kmsg.NameForKey(key); n != "" {
		return toUpperSnake(n)
	}
	return fmt.Sprintf("%d", key)
}

func toUpperSnake(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' && i > 0 {
			b = append(b, '_')
		}
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}

// decodeSASL decodes a SaslHandshake or SaslAuthenticate request; false
// closed the connection (unsupported version or bad body).
func (c *conn) decodeSASL(h requestHeader, rest []byte, req kmsg.Request) bool {
	if !c.s.supports(h.key, h.version) {
		// Kafka cannot answer these at a version it does not know either.
		c.closeWithReason("unsupported SASL request version", zap.Int16("api_key", h.key), zap.Int16("api_version", h.version))
		return false
	}
	req.SetVersion(h.version)
	_, body, err := parseClientID(rest, req.IsFlexible())
	if err == nil {
		err = req.ReadFrom(body)
	}
	if err != nil {
		c.closeWithReason("cannot decode SASL request", zap.Int16("api_key", h.key), zap.Int16("api_version", h.version), zap.Error(err))
		return false
	}
	return true
}

// saslAnswer queues a response to a request the gate handled; closeAfter
// (a failed authentication) makes the writer hold the response back for
// connection.failed.authentication.delay.ms, send it and close the
// connection (KIP-306: Kafka's Selector delays both the failure response
// and the close, so a client guessing passwords cannot retry at once).
func (c *conn) saslAnswer(h requestHeader, flexible bool, resp kmsg.Response, closeAfter bool) bool {
	p := &pending{key: h.key, version: h.version, correlationID: h.correlationID, flexibleHeader: flexible,
		reply: wire.Now(wire.Response{Msg: resp, CloseConn: closeAfter})}
	if closeAfter {
		p.delay = c.s.cfg.FailedAuthenticationDelay
	}
	return c.enqueue(p) && !closeAfter
}

// failAuthentication closes the connection after a failed authentication
// that has no answer (a raw v0 token, a request out of place), once
// connection.failed.authentication.delay.ms has passed (KIP-306). The
// reader stops reading; the writer sends what is queued, waits and closes.
func (c *conn) failAuthentication(msg string) {
	c.log.Info("closing connection: " + msg)
	c.enqueue(&pending{key: -1, raw: true, delay: c.s.cfg.FailedAuthenticationDelay,
		reply: wire.Now(wire.Response{None: true, CloseConn: true})})
}

func (c *conn) saslHandshake(h requestHeader, rest []byte) bool {
	sc := c.sasl
	req := kmsg.NewPtrSASLHandshakeRequest()
	if !c.decodeSASL(h, rest, req) {
		return false
	}
	resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
	resp.SupportedMechanisms = append([]string(nil), sc.cfg.Auth.Mechanisms...)
	m := req.Mechanism
	if !sc.cfg.Auth.Enabled(m) {
		resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		c.log.Info("closing connection: unsupported SASL mechanism", zap.String("mechanism", m), zap.Strings("enabled", sc.cfg.Auth.Mechanisms))
		sc.mech = m
		c.authDone(false)
		return c.saslAnswer(h, false, resp, true)
	}
	sc.badMech = ""
	if sc.reauth && m != sc.mech {
		// As Kafka (REAUTH_BAD_MECHANISM): the handshake succeeds and the
		// exchange then fails with this message.
		sc.badMech = fmt.Sprintf("SASL mechanism '%s' requested by client is not supported for re-authentication of mechanism '%s'", m, sc.mech)
	} else {
		sess, err := sc.cfg.Auth.NewSession(m)
		if err != nil {
			c.closeWithReason("starting SASL session", zap.String("mechanism", m), zap.Error(err))
			return false
		}
		sc.sess, sc.mech = sess, m
	}
	sc.raw = h.version == 0
	sc.state = saslAuthenticate
	return c.saslAnswer(h, false, resp, false)
}

func (c *conn) saslAuthenticate(h requestHeader, rest []byte) bool {
	sc := c.sasl
	req := kmsg.NewPtrSASLAuthenticateRequest()
	if !c.decodeSASL(h, rest, req) {
		return false
	}
	resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
	challenge, done, err := sc.step(req.SASLAuthBytes)
	if err == nil && done {
		err = c.saslComplete()
	}
	if err != nil {
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := sasl.ClientMessage(err, sc.mech, sc.reauth)
		resp.ErrorMessage = &msg
		c.saslFailed(msg, err)
		return c.saslAnswer(h, req.IsFlexible(), resp, true)
	}
	resp.SASLAuthBytes = challenge
	if done {
		resp.SessionLifetimeMillis = sc.lifetime().Milliseconds()
	}
	return c.saslAnswer(h, req.IsFlexible(), resp, false)
}

// step runs the mechanism on one client token.
func (sc *saslConn) step(token []byte) ([]byte, bool, error) {
	if sc.badMech != "" {
		return nil, false, &sasl.AuthError{Msg: sc.badMech}
	}
	ch, done, err := sc.sess.Step(token)
	if ch == nil {
		ch = []byte{}
	}
	return ch, done, err
}

// saslComplete makes the exchange's authorization id the connection's
// principal (User:<id>); re-authentication must keep the principal.
func (c *conn) saslComplete() error {
	sc := c.sasl
	p := security.User(sc.sess.AuthorizationID())
	if sc.reauth && p != sc.prevPrinc {
		return &sasl.AuthError{Msg: fmt.Sprintf("Cannot change principals during re-authentication from %s.%s: %s.%s",
			sc.prevPrinc.Type, sc.prevPrinc.Name, p.Type, p.Name)}
	}
	c.principal = p
	sc.state, sc.sess = saslComplete, nil
	sc.expires = time.Time{}
	if l := sc.lifetime(); l > 0 {
		sc.expires = time.Now().Add(l)
	}
	c.authDone(true)
	c.log.Debug("SASL "+sc.what()+" succeeded", zap.String("mechanism", sc.mech), zap.Stringer("principal", p))
	return nil
}

// lifetime is the session lifetime of the chosen mechanism (0 = none).
func (sc *saslConn) lifetime() time.Duration { return max(sc.cfg.MaxReauth[sc.mech], 0) }

func (c *conn) saslFailed(msg string, cause error) {
	c.authDone(false)
	// The message names no user and carries no token or password; the
	// mechanism's own error (which may say whether a user exists, so the
	// client never sees it) only at debug level.
	c.log.Info("closing connection: failed SASL "+c.sasl.what(), zap.String("mechanism", c.sasl.mech), zap.String("reason", msg))
	c.log.Debug("SASL failure cause", zap.String("mechanism", c.sasl.mech), zap.Error(cause))
}

// saslUnexpected answers a request other than SaslAuthenticate during a
// v1 exchange with ILLEGAL_SASL_STATE in its error code when its response
// has one (Kafka: "Unexpected Kafka request of type … during SASL
// authentication."), and closes the connection.
func (c *conn) saslUnexpected(h requestHeader, rest []byte) bool {
	msg := fmt.Sprintf("Unexpected Kafka request of type %s during SASL authentication.", apiName(h.key))
	c.authDone(false)
	req := kmsg.RequestForKey(h.key)
	if req == nil || !c.s.supports(h.key, h.version) {
		c.failAuthentication(msg)
		return false
	}
	resp := req.ResponseKind()
	resp.SetVersion(h.version)
	if !setTopLevelErrorCode(resp, kerr.IllegalSaslState.Code) {
		c.failAuthentication(msg)
		return false
	}
	c.log.Info("closing connection: " + msg)
	req.SetVersion(h.version)
	return c.saslAnswer(h, req.IsFlexible() && h.key != 18, resp, true)
}

// saslRawToken handles one raw token after a v0 SaslHandshake: the answer
// is a raw size-prefixed token; a failure closes the connection at once
// (v0 has no way to carry an error).
func (c *conn) saslRawToken(token []byte) bool {
	sc := c.sasl
	challenge, done, err := sc.step(token)
	if err == nil && done {
		err = c.saslComplete()
	}
	if err != nil {
		c.saslFailed(sasl.ClientMessage(err, sc.mech, sc.reauth), err)
		c.failAuthentication("failed SASL " + sc.what() + " (raw token)")
		return false
	}
	if done {
		sc.raw = false // Kafka requests follow
	}
	return c.enqueue(&pending{key: -1, raw: true, reply: wire.Now(wire.Response{Body: &wire.Body{
		Chunks: []wire.Chunk{{Bytes: challenge}}, Size: int64(len(challenge))}})})
}

// setTopLevelErrorCode sets resp's top-level ErrorCode int16 field, if the
// response type has one. Only for answers followed by closing the
// connection: at some versions the field is not encoded.
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
