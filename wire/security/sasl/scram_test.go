package sasl

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/xdg-go/scram"
)

// scramLogin runs a whole SCRAM exchange of xdg-go's client against a session.
func scramLogin(t *testing.T, mech, user, pass string, cache *CredentialCache) (string, error) {
	t.Helper()
	hg := scram.SHA256
	if mech == ScramSHA512 {
		hg = scram.SHA512
	}
	cl, err := hg.NewClientUnprepped(user, pass, "")
	if err != nil {
		t.Fatal(err)
	}
	conv := cl.NewConversation()
	a := &Authenticator{Mechanisms: []string{mech}, Credentials: cache}
	s, err := a.NewSession(mech)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := conv.Step("")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		ch, done, err := s.Step([]byte(msg))
		if err != nil {
			return "", err
		}
		if done {
			if _, err := conv.Step(string(ch)); err != nil {
				t.Fatalf("client rejects the server's final message: %v", err)
			}
			if !conv.Valid() {
				t.Fatal("client did not verify the server signature")
			}
			return s.AuthorizationID(), nil
		}
		if msg, err = conv.Step(string(ch)); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("exchange did not finish")
	return "", nil
}

func TestScramLogin(t *testing.T) {
	for _, m := range ScramMechanisms {
		t.Run(m.Name, func(t *testing.T) {
			cache := NewCredentialCache()
			c, err := m.NewCredential("alice-secret", 4096)
			if err != nil {
				t.Fatal(err)
			}
			cache.SetUser("alice", map[string]ScramCredential{m.Name: c})
			if id, err := scramLogin(t, m.Name, "alice", "alice-secret", cache); err != nil || id != "alice" {
				t.Fatalf("good password: %q %v", id, err)
			}
			if _, err := scramLogin(t, m.Name, "alice", "wrong", cache); err == nil {
				t.Fatal("wrong password accepted")
			} else if got := ClientMessage(err, m.Name, false); got != "Authentication failed during authentication due to invalid credentials with SASL mechanism "+m.Name {
				t.Fatalf("client message %q", got)
			}
			if _, err := scramLogin(t, m.Name, "bob", "alice-secret", cache); err == nil {
				t.Fatal("unknown user accepted")
			}
		})
	}
}

// TestScramCredentialFormat checks the credential against one derived
// independently, as RFC 5802 and Kafka's ScramFormatter define it, and
// the text form against ScramCredentialUtils' layout.
func TestScramCredentialFormat(t *testing.T) {
	m, _ := ScramByName(ScramSHA256)
	salt := []byte("3jjm5b6q8x2tnkw0w9h5e7ufm")
	c, err := m.NewCredential("pw", 4096)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.StoredKey) != 32 || len(c.ServerKey) != 32 || c.Iterations != 4096 {
		t.Fatalf("credential %+v", c)
	}
	// Hi by hand: U1 = HMAC(p, salt || INT(1)), Ui = HMAC(p, Ui-1), xor.
	mac := func(k, d []byte) []byte { h := hmac.New(sha256.New, k); h.Write(d); return h.Sum(nil) }
	u := mac([]byte("pw"), append(append([]byte{}, salt...), 0, 0, 0, 1))
	hi := append([]byte{}, u...)
	for i := 1; i < 4096; i++ {
		u = mac([]byte("pw"), u)
		for j := range hi {
			hi[j] ^= u[j]
		}
	}
	ck := mac(hi, []byte("Client Key"))
	sk := sha256.Sum256(ck)
	got := m.CredentialFromSalted(hi, salt, 4096)
	want := "salt=" + base64.StdEncoding.EncodeToString(salt) + ",stored_key=" + base64.StdEncoding.EncodeToString(sk[:]) +
		",server_key=" + base64.StdEncoding.EncodeToString(mac(hi, []byte("Server Key"))) + ",iterations=4096"
	if got.String() != want {
		t.Fatalf("credential\n got %s\nwant %s", got, want)
	}
	salted, _ := m.SaltedPassword("pw", salt, 4096)
	if !hmac.Equal(salted, hi) {
		t.Fatal("SaltedPassword differs from Hi")
	}
	back, err := ParseScramCredential(want)
	if err != nil || back.String() != want {
		t.Fatalf("round trip: %v %s", err, back)
	}
	for _, bad := range []string{"salt=AA==,stored_key=AA==,server_key=AA==", "salt=!!,stored_key=AA==,server_key=AA==,iterations=1", "junk", "salt=AA==,stored_key=AA==,server_key=AA==,iterations=x"} {
		if _, err := ParseScramCredential(bad); err == nil || !strings.HasPrefix(err.Error(), "Credentials not valid") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
