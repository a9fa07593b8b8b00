package sasl

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"math/big"
	"strconv"
	"strings"

	"github.com/xdg-go/scram"
)

// ScramMechanism is one SCRAM mechanism's parameters (Kafka's
// ScramMechanism): its name, hash, the DescribeUserScramCredentials /
// AlterUserScramCredentials mechanism code and the iteration bounds
// AlterUserScramCredentials enforces.
type ScramMechanism struct {
	Name          string
	Type          int8 // ScramMechanism.type(): SCRAM-SHA-256 = 1, SCRAM-SHA-512 = 2
	Hash          func() hash.Hash
	MinIterations int // 4096
	MaxIterations int // 16384
}

// ScramMechanisms are the SCRAM mechanisms Kafka defines, in Kafka's order.
var ScramMechanisms = []ScramMechanism{
	{Name: ScramSHA256, Type: 1, Hash: sha256.New, MinIterations: 4096, MaxIterations: 16384},
	{Name: ScramSHA512, Type: 2, Hash: sha512.New, MinIterations: 4096, MaxIterations: 16384},
}

// ScramByName returns the SCRAM mechanism named n.
func ScramByName(n string) (ScramMechanism, bool) {
	for _, m := range ScramMechanisms {
		if m.Name == n {
			return m, true
		}
	}
	return ScramMechanism{}, false
}

// ScramByType returns the SCRAM mechanism of protocol code t.
func ScramByType(t int8) (ScramMechanism, bool) {
	for _, m := range ScramMechanisms {
		if m.Type == t {
			return m, true
		}
	}
	return ScramMechanism{}, false
}

// ScramCredential is what the broker stores per user and mechanism
// (Kafka's ScramCredential): salt, StoredKey = H(HMAC(SaltedPassword,
// "Client Key")), ServerKey = HMAC(SaltedPassword, "Server Key"), and the
// iteration count of SaltedPassword = Hi(password, salt, iterations).
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int
}

// SaltedPassword is RFC 5802's Hi(password, salt, i): PBKDF2 with the
// mechanism's HMAC, one hash-sized block. Kafka normalises the password
// as its UTF-8 bytes, without SASLprep, and so does this.
func (m ScramMechanism) SaltedPassword(password string, salt []byte, iterations int) ([]byte, error) {
	return pbkdf2.Key(m.Hash, password, salt, iterations, m.Hash().Size())
}

// CredentialFromSalted derives the stored credential from a salted
// password (what AlterUserScramCredentials carries).
func (m ScramMechanism) CredentialFromSalted(salted, salt []byte, iterations int) ScramCredential {
	mac := func(key []byte, s string) []byte {
		h := hmac.New(m.Hash, key)
		h.Write([]byte(s))
		return h.Sum(nil)
	}
	clientKey := mac(salted, "Client Key")
	h := m.Hash()
	h.Write(clientKey)
	return ScramCredential{Salt: salt, StoredKey: h.Sum(nil), ServerKey: mac(salted, "Server Key"), Iterations: iterations}
}

// NewCredential makes a credential for password with a fresh salt, as
// Kafka's ScramFormatter.generateCredential does (the salt is a random
// 130-bit number written in base 36, as ASCII bytes).
func (m ScramMechanism) NewCredential(password string, iterations int) (ScramCredential, error) {
	salt, err := NewSalt()
	if err != nil {
		return ScramCredential{}, err
	}
	salted, err := m.SaltedPassword(password, salt, iterations)
	if err != nil {
		return ScramCredential{}, err
	}
	return m.CredentialFromSalted(salted, salt, iterations), nil
}

// NewSalt returns a salt as Kafka's ScramFormatter.secureRandomBytes makes
// one: a random 130-bit number in base 36, as ASCII bytes.
func NewSalt() ([]byte, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 130))
	if err != nil {
		return nil, err
	}
	return []byte(n.Text(36)), nil
}

// String renders the credential as Kafka's ScramCredentialUtils does in
// /config/users/<user>: "salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>".
func (c ScramCredential) String() string {
	b64 := base64.StdEncoding.EncodeToString
	return "salt=" + b64(c.Salt) + ",stored_key=" + b64(c.StoredKey) + ",server_key=" + b64(c.ServerKey) +
		",iterations=" + strconv.Itoa(c.Iterations)
}

// ParseScramCredential parses the format of String. Errors: a missing
// field, bad base64 or a non-numeric iteration count.
func ParseScramCredential(s string) (ScramCredential, error) {
	props := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return ScramCredential{}, errors.New("Credentials not valid: " + s)
		}
		props[k] = v
	}
	var c ScramCredential
	var err error
	dec := func(k string) []byte {
		v, ok := props[k]
		if !ok {
			err = errors.Join(err, fmt.Errorf("no %s", k))
			return nil
		}
		b, derr := base64.StdEncoding.DecodeString(v)
		if derr != nil {
			err = errors.Join(err, fmt.Errorf("%s: %v", k, derr))
		}
		return b
	}
	c.Salt, c.StoredKey, c.ServerKey = dec("salt"), dec("stored_key"), dec("server_key")
	it, ierr := strconv.Atoi(props["iterations"])
	if ierr != nil {
		err = errors.Join(err, fmt.Errorf("iterations: %q is not a number", props["iterations"]))
	}
	c.Iterations = it
	if err != nil {
		return ScramCredential{}, fmt.Errorf("Credentials not valid: %w", err)
	}
	return c, nil
}

// scramSession is the server side of SCRAM (RFC 5802) as Kafka's
// ScramSaslServer serves it, users from the credential cache. xdg-go/scram
// parses the client-first message (GS2 header, SASLname decoding, the
// user lookup) and builds the server-first message; the final step is
// checked here with Kafka's rules, which are laxer than xdg-go's: the
// final nonce must end with the server's nonce (librdkafka sends its own
// nonce in front of the combined one, and Kafka accepts that), and the
// channel-binding attribute is not compared. An unknown user or a
// credential below the mechanism's minimum iterations fails with the
// generic message; an authorization id other than the user name fails
// with Kafka's message.
type scramSession struct {
	mech  ScramMechanism
	conv  *scram.ServerConversation
	cred  ScramCredential // found by the lookup
	c1b   string          // client-first-message-bare
	s1    string          // server-first-message
	nonce string          // the combined nonce of s1
	step  int
	authz string
}

func newScramSession(name string, cache *CredentialCache) (Session, error) {
	m, _ := ScramByName(name)
	hg := scram.SHA256
	if name == ScramSHA512 {
		hg = scram.SHA512
	}
	s := &scramSession{mech: m}
	srv, err := hg.NewServer(func(user string) (scram.StoredCredentials, error) {
		c, ok := cache.Get(name, user)
		if !ok {
			return scram.StoredCredentials{}, errors.New("Authentication failed: Invalid user credentials")
		}
		if c.Iterations < m.MinIterations {
			return scram.StoredCredentials{}, fmt.Errorf("Iterations %d is less than the minimum %d for %s", c.Iterations, m.MinIterations, name)
		}
		s.cred = c
		return scram.StoredCredentials{KeyFactors: scram.KeyFactors{Salt: string(c.Salt), Iters: c.Iterations},
			StoredKey: c.StoredKey, ServerKey: c.ServerKey}, nil
	})
	if err != nil {
		return nil, err
	}
	// Server nonces as Kafka's ScramFormatter.secureRandomString makes them
	// (base 36, printable and comma-free).
	srv = srv.WithNonceGenerator(func() string {
		n, err := NewSalt()
		if err != nil {
			return ""
		}
		return string(n)
	})
	s.conv = srv.NewConversation()
	return s, nil
}

func (s *scramSession) Step(token []byte) ([]byte, bool, error) {
	switch s.step {
	case 0:
		s.step++
		out, err := s.conv.Step(string(token))
		if err != nil {
			return nil, false, err
		}
		if a := s.conv.AuthzID(); a != "" && a != s.conv.Username() {
			return nil, false, &AuthError{"Authentication failed: Client requested an authorization id that is different from username"}
		}
		// The bare message follows the GS2 header "flag,[a=authzid],".
		_, rest, _ := strings.Cut(string(token), ",")
		_, s.c1b, _ = strings.Cut(rest, ",")
		s.s1 = out
		s.nonce = strings.TrimPrefix(strings.SplitN(out, ",", 2)[0], "r=")
		return []byte(out), false, nil
	case 1:
		s.step++
		return s.final(string(token))
	}
	return nil, false, fmt.Errorf("Unexpected challenge in Sasl server state COMPLETE")
}

// final verifies the client-final-message "c=…,r=…[,ext…],p=…" and
// answers the server-final-message "v=<ServerSignature>".
func (s *scramSession) final(msg string) ([]byte, bool, error) {
	i := strings.LastIndex(msg, ",p=")
	if i < 0 || !strings.HasPrefix(msg, "c=") {
		return nil, false, errors.New("Authentication failed: Invalid client final message")
	}
	withoutProof := msg[:i]
	proof, err := base64.StdEncoding.DecodeString(msg[i+3:])
	if err != nil {
		return nil, false, errors.New("Authentication failed: Invalid client final message")
	}
	var nonce string
	for _, attr := range strings.Split(withoutProof, ",") {
		if v, ok := strings.CutPrefix(attr, "r="); ok {
			nonce = v
		}
	}
	if s.nonce == "" || !strings.HasSuffix(nonce, s.nonce) {
		return nil, false, errors.New("Invalid client nonce in the final client message.")
	}
	mac := func(key []byte, data string) []byte {
		h := hmac.New(s.mech.Hash, key)
		h.Write([]byte(data))
		return h.Sum(nil)
	}
	authMsg := s.c1b + "," + s.s1 + "," + withoutProof
	sig := mac(s.cred.StoredKey, authMsg)
	if len(proof) != len(sig) {
		return nil, false, errors.New("Invalid client credentials")
	}
	clientKey := make([]byte, len(sig))
	for j := range sig {
		clientKey[j] = proof[j] ^ sig[j]
	}
	h := s.mech.Hash()
	h.Write(clientKey)
	if !hmac.Equal(h.Sum(nil), s.cred.StoredKey) {
		return nil, false, errors.New("Invalid client credentials")
	}
	s.authz = s.conv.Username()
	v := "v=" + base64.StdEncoding.EncodeToString(mac(s.cred.ServerKey, authMsg))
	s.cred = ScramCredential{} // not kept past the exchange
	return []byte(v), true, nil
}

func (s *scramSession) AuthorizationID() string { return s.authz }
