package keystore_test

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"strings"
	"testing"

	"gregor/wire/security/keystore"
	"gregor/wire/security/keystore/keystoretest"
)

// Every format loads the same chain and key, and the trust stores verify
// the leaf; wrong passwords and mismatched keys are refused by name.
func TestFormats(t *testing.T) {
	dir := t.TempDir()
	ca := keystoretest.NewCA(t, "test-ca")
	leaf := ca.Server(t, "broker-1")
	other := ca.Server(t, "broker-2")

	stores := map[string]keystore.KeyStore{
		"PKCS12":      {Type: "PKCS12", Location: leaf.WritePKCS12(t, dir, "k.p12", "ks-pass"), Password: "ks-pass"},
		"JKS":         {Type: "jks", Location: leaf.WriteJKS(t, dir, "k.jks", "ks-pass", "key-pass"), Password: "ks-pass", KeyPassword: "key-pass"},
		"PEM file":    {Type: "PEM", Location: leaf.WritePEM(t, dir, "k.pem")},
		"PEM inline":  {Type: "PEM", CertificateChain: leaf.CertPEM(), Key: leaf.KeyPEM()},
		"JKS default": {Location: leaf.WriteJKS(t, dir, "k2.jks", "same", "same"), Password: "same"},
	}
	for name, ks := range stores {
		cert, err := ks.Load()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cert.Leaf.Subject.CommonName != "broker-1" || len(cert.Certificate) != 2 {
			t.Fatalf("%s: leaf %v, chain of %d", name, cert.Leaf.Subject, len(cert.Certificate))
		}
	}
	trusts := map[string]keystore.TrustStore{
		"PKCS12":     {Type: "PKCS12", Location: ca.WritePKCS12Trust(t, dir, "t.p12", "ts-pass"), Password: "ts-pass"},
		"JKS":        {Type: "JKS", Location: ca.WriteJKSTrust(t, dir, "t.jks", "ts-pass"), Password: "ts-pass"},
		"PEM file":   {Type: "PEM", Location: ca.WritePEMTrust(t, dir, "ca.pem")},
		"PEM inline": {Type: "PEM", Certificates: ca.CertPEM()},
	}
	for name, ts := range trusts {
		pool, certs, err := ts.Load()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(certs) != 1 || certs[0].Subject.CommonName != "test-ca" {
			t.Fatalf("%s: %v", name, certs)
		}
		if _, err := leaf.Cert.Verify(x509VerifyOptions(pool)); err != nil {
			t.Fatalf("%s: leaf does not verify: %v", name, err)
		}
	}

	bad := map[string]struct {
		ks   keystore.KeyStore
		want string
	}{
		"wrong PKCS12 password":    {keystore.KeyStore{Type: "PKCS12", Location: stores["PKCS12"].Location, Password: "nope"}, "ssl.keystore.password"},
		"wrong JKS key password":   {keystore.KeyStore{Type: "JKS", Location: stores["JKS"].Location, Password: "ks-pass", KeyPassword: "nope"}, "ssl.key.password"},
		"wrong JKS store password": {keystore.KeyStore{Type: "JKS", Location: stores["JKS"].Location, Password: "nope"}, "wrong password"},
		"mismatched key":           {keystore.KeyStore{Type: "PEM", CertificateChain: leaf.CertPEM(), Key: other.KeyPEM()}, "does not match"},
		"inline without PEM":       {keystore.KeyStore{Type: "PKCS12", Key: leaf.KeyPEM()}, "PEM"},
		"unknown type":             {keystore.KeyStore{Type: "BKS", Location: "x"}, "not supported"},
		"missing file":             {keystore.KeyStore{Type: "PKCS12", Location: dir + "/none.p12"}, "no such file"},
		"key only":                 {keystore.KeyStore{Type: "PEM", Key: leaf.KeyPEM()}, "both"},
	}
	for name, c := range bad {
		if _, err := c.ks.Load(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to mention %q", name, err, c.want)
		}
	}
	// A client certificate's subject survives the round trip.
	cl := ca.Client(t, pkix.Name{CommonName: "alice", OrganizationalUnit: []string{"eng"}})
	cert, err := keystore.KeyStore{Type: "PKCS12", Location: cl.WritePKCS12(t, dir, "alice.p12", "pw"), Password: "pw"}.Load()
	if err != nil || cert.Leaf.Subject.CommonName != "alice" {
		t.Fatalf("client keystore: %v %v", cert.Leaf, err)
	}
	var _ tls.Certificate = cert
}

func x509VerifyOptions(pool *x509.CertPool) x509.VerifyOptions {
	return x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}
}
