package server

import (
	"context"
	"encoding/binary"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"gregor/config"
	"gregor/wire/security"
	"gregor/wire/security/sasl"
)

type authCount struct{ ok, failed, reauthOK, reauthFailed int }

type countingObserver struct {
	ch chan [2]bool // reauth, ok
}

func (o *countingObserver) AuthenticationDone(_, _ string, reauth, ok bool) {
	o.ch <- [2]bool{reauth, ok}
}

// saslEnv is a server whose only listener is SASL_PLAINTEXT with PLAIN
// (alice/alice-secret, bob/bob-secret) and SCRAM-SHA-256 (carol/carol-secret).
func startSASL(t *testing.T, mod func(*SASLListener)) (*testEnv, *countingObserver) {
	t.Helper()
	return startSASLConfig(t, mod, nil)
}

// startSASLConfig is startSASL with cfg applied to the server's Config.
func startSASLConfig(t *testing.T, mod func(*SASLListener), cfg func(*Config)) (*testEnv, *countingObserver) {
	t.Helper()
	cache := sasl.NewCredentialCache()
	m, _ := sasl.ScramByName(sasl.ScramSHA256)
	c, err := m.NewCredential("carol-secret", 4096)
	if err != nil {
		t.Fatal(err)
	}
	cache.SetUser("carol", map[string]sasl.ScramCredential{sasl.ScramSHA256: c})
	sl := &SASLListener{Auth: &sasl.Authenticator{Mechanisms: []string{sasl.Plain, sasl.ScramSHA256},
		PlainUsers: map[string]string{"alice": "alice-secret", "bob": "bob-secret"}, Credentials: cache}}
	if mod != nil {
		mod(sl)
	}
	obs := &countingObserver{ch: make(chan [2]bool, 64)}
	env := startServer(t, func(c *Config) {
		c.Listeners = []config.Listener{{Name: "SASL_PLAINTEXT", Host: "127.0.0.1", Port: 0}}
		c.Security = map[string]ListenerSecurity{"SASL_PLAINTEXT": {Protocol: security.SASLPlaintext, SASL: sl}}
		if cfg != nil {
			cfg(c)
		}
	})
	env.srv.Auth = obs // before any connection
	return env, obs
}

func handshake(r *rawClient, version int16, mech string) *kmsg.SASLHandshakeResponse {
	r.t.Helper()
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version, req.Mechanism = version, mech
	return r.roundTrip(req).(*kmsg.SASLHandshakeResponse)
}

func authenticate(r *rawClient, version int16, token string) *kmsg.SASLAuthenticateResponse {
	r.t.Helper()
	req := kmsg.NewPtrSASLAuthenticateRequest()
	req.Version, req.SASLAuthBytes = version, []byte(token)
	return r.roundTrip(req).(*kmsg.SASLAuthenticateResponse)
}

func (e *testEnv) lastPrincipal(t *testing.T) security.Principal {
	t.Helper()
	e.d.mu.Lock()
	defer e.d.mu.Unlock()
	if len(e.d.principals) == 0 {
		t.Fatal("no Metadata request reached the dispatcher")
	}
	return e.d.principals[len(e.d.principals)-1]
}

func (o *countingObserver) next(t *testing.T) (reauth, ok bool) {
	t.Helper()
	select {
	case v := <-o.ch:
		return v[0], v[1]
	case <-time.After(10 * time.Second):
		t.Fatal("no authentication reported")
	}
	return
}

func TestSASLPlainV1(t *testing.T) {
	env, obs := startSASL(t, nil)
	r := dialRaw(t, env.addr)
	// An ApiVersions version we do not serve is answered UNSUPPORTED_VERSION
	// (v0) and the client may ask again.
	high := kmsg.NewPtrApiVersionsRequest()
	high.Version = 9
	r.send(high)
	v0 := kmsg.NewPtrApiVersionsRequest()
	if _, resp, err := r.recv(v0); err != nil || resp.(*kmsg.ApiVersionsResponse).ErrorCode != kerr.UnsupportedVersion.Code {
		t.Fatalf("ApiVersions v9: %v %v", resp, err)
	}
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	if resp := r.roundTrip(av).(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Fatalf("ApiVersions before auth: %+v", resp)
	}
	hs := handshake(r, 1, "PLAIN")
	if hs.ErrorCode != 0 || strings.Join(hs.SupportedMechanisms, ",") != "PLAIN,SCRAM-SHA-256" {
		t.Fatalf("handshake: %+v", hs)
	}
	a := authenticate(r, 2, "\x00alice\x00alice-secret")
	if a.ErrorCode != 0 || a.SessionLifetimeMillis != 0 {
		t.Fatalf("authenticate: %+v", a)
	}
	if _, ok := obs.next(t); !ok {
		t.Fatal("success not counted")
	}
	r.roundTrip(metadataReq(4))
	if p := env.lastPrincipal(t); p != security.User("alice") {
		t.Fatalf("principal %v", p)
	}
	// After authentication, SaslHandshake is the handlers' (no re-authentication without a lifetime).
	if hs := handshake(r, 1, "PLAIN"); hs.ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("handshake after auth: %+v", hs)
	}
}

func TestSASLPlainWrongPassword(t *testing.T) {
	env, obs := startSASL(t, nil)
	for _, tok := range []string{"\x00alice\x00nope", "\x00mallory\x00alice-secret"} {
		r := dialRaw(t, env.addr)
		handshake(r, 1, "PLAIN")
		a := authenticate(r, 1, tok)
		if a.ErrorCode != kerr.SaslAuthenticationFailed.Code || a.ErrorMessage == nil ||
			*a.ErrorMessage != "Authentication failed: Invalid username or password" {
			t.Fatalf("authenticate: %+v", a)
		}
		r.expectClosed()
		if _, ok := obs.next(t); ok {
			t.Fatal("failure counted as success")
		}
	}
	for _, l := range env.logs.All() {
		for _, f := range l.Context {
			if strings.Contains(f.String, "nope") || strings.Contains(l.Message, "nope") {
				t.Fatalf("the password was logged: %v", l)
			}
		}
	}
	// authzid other than the user.
	r := dialRaw(t, env.addr)
	handshake(r, 1, "PLAIN")
	if a := authenticate(r, 1, "bob\x00alice\x00alice-secret"); a.ErrorCode != kerr.SaslAuthenticationFailed.Code ||
		!strings.Contains(*a.ErrorMessage, "authorization id that is different") {
		t.Fatalf("authzid: %+v", a)
	}
}

func TestSASLUnsupportedMechanism(t *testing.T) {
	env, _ := startSASL(t, nil)
	r := dialRaw(t, env.addr)
	hs := handshake(r, 1, "GSSAPI")
	if hs.ErrorCode != kerr.UnsupportedSaslMechanism.Code || strings.Join(hs.SupportedMechanisms, ",") != "PLAIN,SCRAM-SHA-256" {
		t.Fatalf("handshake: %+v", hs)
	}
	r.expectClosed()
}

func TestSASLRequestBeforeAuthCloses(t *testing.T) {
	env, _ := startSASL(t, nil)
	r := dialRaw(t, env.addr)
	r.send(metadataReq(4))
	r.expectClosed()
	if !env.logged("Unexpected Kafka request of type METADATA during SASL handshake.") {
		t.Fatal("reason not logged")
	}
	env.d.mu.Lock()
	n := len(env.d.principals)
	env.d.mu.Unlock()
	if n != 0 {
		t.Fatal("the request reached the dispatcher")
	}
	// During a v1 exchange: answered ILLEGAL_SASL_STATE, then closed.
	r = dialRaw(t, env.addr)
	handshake(r, 1, "PLAIN")
	resp := r.roundTrip(metadataReq(4)).(*kmsg.MetadataResponse)
	_ = resp // Metadata has no top-level error code: the connection just closes
	r.expectClosed()
}

// rawToken writes a SASL token as a bare size-prefixed frame (handshake v0)
// and reads the server's bare answer.
func rawToken(t *testing.T, r *rawClient, tok string) ([]byte, error) {
	t.Helper()
	var sz [4]byte
	binary.BigEndian.PutUint32(sz[:], uint32(len(tok)))
	if _, err := r.c.Write(append(sz[:], tok...)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(r.c, sz[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(sz[:]))
	_, err := io.ReadFull(r.c, b)
	return b, err
}

func TestSASLHandshakeV0RawTokens(t *testing.T) {
	env, _ := startSASL(t, nil)
	r := dialRaw(t, env.addr)
	if hs := handshake(r, 0, "PLAIN"); hs.ErrorCode != 0 {
		t.Fatalf("handshake v0: %+v", hs)
	}
	if b, err := rawToken(t, r, "\x00bob\x00bob-secret"); err != nil || len(b) != 0 {
		t.Fatalf("raw answer %q %v", b, err)
	}
	r.roundTrip(metadataReq(4))
	if p := env.lastPrincipal(t); p != security.User("bob") {
		t.Fatalf("principal %v", p)
	}
	// A wrong password over v0 just closes (v0 has no error response).
	r = dialRaw(t, env.addr)
	handshake(r, 0, "PLAIN")
	if _, err := rawToken(t, r, "\x00bob\x00nope"); err == nil {
		t.Fatal("wrong v0 password answered")
	}
}

func TestSASLStallTimesOut(t *testing.T) {
	env, obs := startSASL(t, func(l *SASLListener) { l.HandshakeTimeout = 200 * time.Millisecond })
	start := time.Now()
	r := dialRaw(t, env.addr)
	handshake(r, 1, "PLAIN") // then nothing
	r.expectClosed()
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("closed after %v, before the timeout", d)
	}
	if _, ok := obs.next(t); ok {
		t.Fatal("timeout counted as success")
	}
	if !env.logged("SASL authentication not completed within 200ms") {
		t.Fatal("reason not logged")
	}
}

func TestSASLReauthentication(t *testing.T) {
	env, obs := startSASL(t, func(l *SASLListener) {
		l.MaxReauth = map[string]time.Duration{sasl.Plain: 1500 * time.Millisecond}
	})
	r := dialRaw(t, env.addr)
	handshake(r, 1, "PLAIN")
	if a := authenticate(r, 1, "\x00alice\x00alice-secret"); a.ErrorCode != 0 || a.SessionLifetimeMillis != 1500 {
		t.Fatalf("authenticate: %+v", a)
	}
	obs.next(t)
	// KIP-368 allows one re-authentication per second.
	time.Sleep(1100 * time.Millisecond)
	handshake(r, 1, "PLAIN")
	if a := authenticate(r, 1, "\x00alice\x00alice-secret"); a.ErrorCode != 0 || a.SessionLifetimeMillis != 1500 {
		t.Fatalf("re-authenticate: %+v", a)
	}
	if reauth, ok := obs.next(t); !reauth || !ok {
		t.Fatalf("re-authentication reported as reauth=%v ok=%v", reauth, ok)
	}
	r.roundTrip(metadataReq(4))
	if p := env.lastPrincipal(t); p != security.User("alice") {
		t.Fatalf("principal %v", p)
	}
	// Another principal on re-authentication is refused.
	time.Sleep(1100 * time.Millisecond)
	handshake(r, 1, "PLAIN")
	a := authenticate(r, 1, "\x00bob\x00bob-secret")
	if a.ErrorCode != kerr.SaslAuthenticationFailed.Code || *a.ErrorMessage != "Cannot change principals during re-authentication from User.alice: User.bob" {
		t.Fatalf("principal change: %+v", a)
	}
	r.expectClosed()

	// A session that expired closes on its next request.
	r = dialRaw(t, env.addr)
	handshake(r, 1, "PLAIN")
	authenticate(r, 1, "\x00alice\x00alice-secret")
	time.Sleep(1600 * time.Millisecond)
	r.send(metadataReq(4))
	r.expectClosed()
	if !env.logged("SASL session expired") {
		t.Fatal("expiry not logged")
	}
}

// TestSASLFranzGo logs in with franz-go's PLAIN and SCRAM clients.
func TestSASLFranzGo(t *testing.T) {
	env, _ := startSASL(t, nil)
	for _, tc := range []struct {
		name string
		mech kgo.Opt
		ok   bool
	}{
		{"plain", kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()), true},
		{"plain-wrong", kgo.SASL(plain.Auth{User: "alice", Pass: "x"}.AsMechanism()), false},
		{"scram", kgo.SASL(scram.Auth{User: "carol", Pass: "carol-secret"}.AsSha256Mechanism()), true},
		{"scram-wrong", kgo.SASL(scram.Auth{User: "carol", Pass: "x"}.AsSha256Mechanism()), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl, err := kgo.NewClient(kgo.SeedBrokers(env.addr), tc.mech, kgo.RequestRetries(0))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err = kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
			if tc.ok && err != nil {
				t.Fatal(err)
			}
			if !tc.ok && !strings.Contains(strings.ToLower(err.Error()), "authentication failed") {
				t.Fatalf("want an authentication error, got %v", err)
			}
		})
	}
}

// TestSASLFranzGoReauthenticates: with a 2.5 s session lifetime franz-go
// re-authenticates on its live connection (KIP-368) and keeps being
// served past several lifetimes.
func TestSASLFranzGoReauthenticates(t *testing.T) {
	env, obs := startSASL(t, func(l *SASLListener) {
		// franz-go re-authenticates 1 s before the end; Kafka allows one
		// re-authentication a second: a lifetime above 2 s.
		l.MaxReauth = map[string]time.Duration{sasl.ScramSHA256: 2500 * time.Millisecond}
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.addr), kgo.SASL(scram.Auth{User: "carol", Pass: "carol-secret"}.AsSha256Mechanism()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	reauths := 0
	for reauths < 2 {
		if _, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl); err != nil {
			t.Fatalf("after %d re-authentications: %v", reauths, err)
		}
		select {
		case v := <-obs.ch:
			if !v[1] {
				t.Fatalf("authentication failed (reauth=%v)", v[0])
			}
			if v[0] {
				reauths++
			}
		case <-time.After(200 * time.Millisecond): // keep the connection busy between checks
		case <-ctx.Done():
			t.Fatalf("only %d re-authentications", reauths)
		}
	}
	if env.logged("SASL session expired") {
		t.Fatal("a session expired although the client re-authenticated")
	}
}

// TestSASLMaxReceiveSize: before authentication a frame above
// sasl.server.max.receive.size closes the connection.
func TestSASLMaxReceiveSize(t *testing.T) {
	env, _ := startSASL(t, func(l *SASLListener) { l.MaxReceiveSize = 1024 })
	r := dialRaw(t, env.addr)
	var sz [4]byte
	binary.BigEndian.PutUint32(sz[:], 4096)
	if _, err := r.c.Write(sz[:]); err != nil {
		t.Fatal(err)
	}
	r.expectClosed()
	if !env.logged("request size 4096 outside [0, sasl.server.max.receive.size=1024]") {
		t.Fatal("reason not logged")
	}
}
